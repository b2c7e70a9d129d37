import Testing
import Capture
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
}
