import Testing
import Capture
import JSONFormat
@testable import Appliance

@Suite struct DoctorCaptureModeTests {
    static func webcam(_ formats: [PixelFormatDescription]) -> CameraDescription {
        CameraDescription(path: "/dev/video0", stableNames: [], driver: "uvcvideo", card: "USB Webcam", busInfo: "usb-1",
                          capabilities: [.videoCapture, .streaming], formats: formats)
    }

    static func format(_ fourCC: FourCC, _ sizes: [(Int, Int, [UInt32])]) -> PixelFormatDescription {
        PixelFormatDescription(fourCC: fourCC, name: "", isCompressed: fourCC == .mjpeg, isEmulated: false,
                               frameSizes: sizes.map { FrameSizeDescription(width: $0.0, height: $0.1,
                                    intervals: $0.2.map { FrameInterval(numerator: 1, denominator: $0) }) })
    }

    @Test func aUsableCameraShowsTheModeCaptureWouldNegotiate() {
        let camera = Self.webcam([Self.format(.yuyv, [(640, 480, [30, 15]), (320, 240, [30, 15]), (160, 120, [30])])])
        let item = Diagnosis.cameraItem(camera, underLibcamerify: false, captureRequest: CaptureRequest(framesPerSecond: 15))
        #expect(item.verdict == .ok)
        #expect(item.details.last == "would capture YUYV 320x240, camera 15 fps, model 15 fps, keeps every frame")
        let modeFact = item.facts.first { $0.0 == "capture_mode" }
        #expect(modeFact != nil)
    }

    @Test func aCameraWithoutTheModelRateShowsTheDecimation() {
        let camera = Self.webcam([Self.format(.mjpeg, [(640, 480, [30])])])
        let item = Diagnosis.cameraItem(camera, underLibcamerify: false, captureRequest: CaptureRequest(framesPerSecond: 10))
        #expect(item.details.last == "would capture MJPG 640x480, camera 30 fps, model 10 fps, keeps 1 in 3.0 by timestamp")
    }

    @Test func theReportPassesTheRequestThrough() {
        var observations = DoctorObservations()
        observations.cameraNodes = [.init(path: "/dev/video0", description: .success(Self.webcam([Self.format(.yuyv, [(640, 480, [30])])])))]
        let report = Diagnosis.report(observations, configuration: ApplianceConfiguration(), captureRequest: CaptureRequest(framesPerSecond: 30))
        #expect(report.text().contains("would capture YUYV 640x480, camera 30 fps, model 30 fps, keeps every frame"))
    }

    static var webcamControls: CameraControlReport {
        var controls = CameraControlReport(mode: .planned)
        controls.exposureMode = CameraControlState(.set(3), minimum: 0, maximum: 3)
        controls.exposurePriority = CameraControlState(.set(0), minimum: 0, maximum: 1)
        controls.backlightCompensation = CameraControlState(.set(1), minimum: 0, maximum: 2)
        controls.autogain = CameraControlState(.set(1), minimum: 0, maximum: 1)
        return controls
    }

    @Test func aUsableCameraShowsTheControlsOpeningWouldSetOnOneLine() throws {
        let camera = Self.webcam([Self.format(.yuyv, [(640, 480, [30])])])
        let item = Diagnosis.cameraItem(camera, underLibcamerify: false, captureRequest: CaptureRequest(framesPerSecond: 15),
                                        controls: Self.webcamControls)
        #expect(item.verdict == .ok)
        #expect(item.details.last == "camera controls (set at open): auto exposure (aperture priority), frame rate kept (exposure_auto_priority 0), backlight compensation 1 of 0–2, autogain on")
        let facts = try #require(item.facts.first { $0.0 == "controls" }?.1)
        let json = facts.serialized()
        #expect(json.contains(#""mode":"planned""#))
        #expect(json.contains(#""exposure_auto":{"state":"set","value":3,"minimum":0,"maximum":3}"#))
        #expect(json.contains(#""backlight_compensation":{"state":"set","value":1,"minimum":0,"maximum":2}"#))
    }

    @Test func controlsACameraLacksAreNamedAndAreNoProblem() throws {
        // What vivid offers: autogain only.
        var controls = CameraControlReport(mode: .planned)
        controls.autogain = CameraControlState(.set(1), minimum: 0, maximum: 1)
        let camera = Self.webcam([Self.format(.yuyv, [(640, 480, [30])])])
        let item = Diagnosis.cameraItem(camera, underLibcamerify: false, controls: controls)
        #expect(item.verdict == .ok)
        #expect(item.details.last == "camera controls (set at open): autogain on; not offered by this camera: auto exposure, exposure priority, backlight compensation")
        let json = try #require(item.facts.first { $0.0 == "controls" }?.1).serialized()
        #expect(json.contains(#""exposure_auto":{"state":"not_offered"}"#))
        #expect(json.contains(#""autogain":{"state":"set","value":1,"minimum":0,"maximum":1}"#))
        let none = Diagnosis.cameraItem(camera, underLibcamerify: false, controls: CameraControlReport(mode: .planned))
        #expect(none.details.last == "camera controls (set at open): none offered by this camera (auto exposure, exposure priority, backlight compensation, autogain)")
    }

    @Test func withAutoControlsOffDoctorSaysTheCameraKeepsItsSettings() throws {
        var observations = DoctorObservations()
        observations.cameraNodes = [.init(path: "/dev/video0", description: .success(Self.webcam([Self.format(.yuyv, [(640, 480, [30])])])),
                                          controls: .keptCameraSettings)]
        let report = Diagnosis.report(observations, configuration: ApplianceConfiguration())
        #expect(report.text().contains("\n         camera controls: left as the camera has them (camera.auto_controls = false)\n"))
        #expect(report.json(version: "test").serialized().contains(#""controls":{"mode":"kept_camera_settings","text":"left as the camera has them (camera.auto_controls = false)"}"#))
    }

    @Test func aCameraWhoseControlsWereNotQueriedHasNoControlsLine() {
        let camera = Self.webcam([Self.format(.yuyv, [(640, 480, [30])])])
        let item = Diagnosis.cameraItem(camera, underLibcamerify: false)
        #expect(!item.details.contains { $0.hasPrefix("camera controls") })
        #expect(!item.facts.contains { $0.0 == "controls" })
    }
}
