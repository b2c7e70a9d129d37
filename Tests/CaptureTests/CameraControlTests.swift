import Testing
import CV4L2
import LinuxSystem
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

@Suite struct CameraControlTests {
    static let exposureAuto = UInt32(V4L2_CID_EXPOSURE_AUTO)
    static let exposurePriority = UInt32(V4L2_CID_EXPOSURE_AUTO_PRIORITY)
    static let exposureAbsolute = UInt32(V4L2_CID_EXPOSURE_ABSOLUTE)
    static let backlight = UInt32(V4L2_CID_BACKLIGHT_COMPENSATION)
    static let autogain = UInt32(V4L2_CID_AUTOGAIN)
    static let manual = Int32(V4L2_EXPOSURE_MANUAL.rawValue)
    static let aperturePriority = Int32(V4L2_EXPOSURE_APERTURE_PRIORITY.rawValue)
    static let auto = Int32(V4L2_EXPOSURE_AUTO.rawValue)

    /// What a typical UVC webcam offers: exposure menu with manual and aperture priority, set to
    /// manual; exposure priority on; absolute exposure; backlight compensation 0–2; autogain.
    static func uvcWebcam() -> MockV4L2 {
        let mock = MockV4L2()
        mock.controls = [
            exposureAuto: .init(type: V4L2_CTRL_TYPE_MENU, minimum: 0, maximum: 3, value: manual, menuItems: [manual, aperturePriority]),
            exposurePriority: .init(type: V4L2_CTRL_TYPE_BOOLEAN, value: 1),
            exposureAbsolute: .init(minimum: 3, maximum: 2047, value: 250),
            backlight: .init(minimum: 0, maximum: 2, value: 0),
            autogain: .init(type: V4L2_CTRL_TYPE_BOOLEAN, value: 0),
        ]
        return mock
    }

    static func open(_ mock: MockV4L2, autoControls: Bool = true) -> (streaming: Bool, controls: CameraControlReport?) {
        let camera = CameraSource(configuration: CameraConfiguration(device: "/dev/video0", request: CaptureRequest(framesPerSecond: 15),
                                                                     bufferCount: 4, autoControls: autoControls), calls: mock)
        return (camera.isStreaming, camera.controls)
    }

    static func writes(_ mock: MockV4L2) -> [UInt32: Int32] {
        Dictionary(mock.controlWrites.map { ($0.id, $0.value) }, uniquingKeysWith: { $1 })
    }

    @Test func aWebcamOfferingEveryControlGetsAperturePriorityTheFrameRateKeptBacklightCompensationAndAutogain() throws {
        let mock = Self.uvcWebcam()
        let (streaming, report) = Self.open(mock)
        #expect(streaming)
        let controls = try #require(report)
        #expect(controls.mode == .applied)
        #expect(controls.exposureMode == CameraControlState(.set(Self.aperturePriority), minimum: 0, maximum: 3))
        #expect(controls.exposurePriority.outcome == .set(0))
        #expect(controls.backlightCompensation == CameraControlState(.set(1), minimum: 0, maximum: 2))
        #expect(controls.autogain.outcome == .set(1))
        #expect(Self.writes(mock) == [Self.exposureAuto: Self.aperturePriority, Self.exposurePriority: 0, Self.backlight: 1, Self.autogain: 1])
        // Exposure mode first: setting it may change which of the others are active.
        #expect(mock.controlWrites.first?.id == Self.exposureAuto)
        #expect(mock.controls[Self.exposureAbsolute]?.value == 250, "absolute exposure is never written")
        #expect(controls.description == "auto exposure (aperture priority), frame rate kept (exposure_auto_priority 0), backlight compensation 1 of 0–2, autogain on")
    }

    @Test func theControlsAreSetBeforeStreamingStarts() {
        let mock = Self.uvcWebcam()
        _ = Self.open(mock)
        let lastControl = mock.requests.lastIndex(of: PW_VIDIOC_S_CTRL)
        let streamOn = mock.requests.firstIndex(of: PW_VIDIOC_STREAMON)
        #expect(lastControl != nil && streamOn != nil && lastControl! < streamOn!)
    }

    @Test func anExposureMenuWithoutAperturePriorityGetsPlainAuto() throws {
        let mock = MockV4L2()
        mock.controls = [Self.exposureAuto: .init(type: V4L2_CTRL_TYPE_MENU, minimum: 0, maximum: 1, value: Self.manual, menuItems: [Self.auto, Self.manual])]
        let controls = try #require(Self.open(mock).controls)
        #expect(controls.exposureMode.outcome == .set(Self.auto))
        #expect(controls.description == "auto exposure (auto); not offered by this camera: exposure priority, backlight compensation, autogain")
    }

    @Test func aCameraWithManualExposureOnlyKeepsItsExposureAndAbsoluteExposureIsLeftAlone() throws {
        let mock = Self.uvcWebcam()
        mock.controls[Self.exposureAuto]!.menuItems = [Self.manual]
        let (streaming, report) = Self.open(mock)
        #expect(streaming)
        let controls = try #require(report)
        #expect(controls.exposureMode.outcome == .noAutomaticMode)
        #expect(Self.writes(mock)[Self.exposureAuto] == nil)
        #expect(mock.controls[Self.exposureAbsolute]?.value == 250)
        #expect(controls.exposurePriority.outcome == .set(0))
    }

    @Test func aDriverOfferingNoControlsOpensAndSaysSo() throws {
        let mock = MockV4L2()
        let (streaming, report) = Self.open(mock)
        #expect(streaming)
        let controls = try #require(report)
        for control in CameraControl.allCases { #expect(controls[control].outcome == .notOffered) }
        #expect(!mock.requests.contains(PW_VIDIOC_S_CTRL))
        #expect(controls.description == "none offered by this camera (auto exposure, exposure priority, backlight compensation, autogain)")
    }

    @Test func aDriverWithoutControlIoctlsAtAllOpensToo() throws {
        let mock = MockV4L2()
        mock.ioctlFailures[PW_VIDIOC_QUERYCTRL] = Array(repeating: ENOTTY, count: 4)
        let (streaming, report) = Self.open(mock)
        #expect(streaming)
        #expect(try #require(report).autogain.outcome == .notOffered)
    }

    @Test func aRefusingDriverIsRecordedPerControlAndTheOpenStillSucceeds() throws {
        let mock = Self.uvcWebcam()
        mock.controls[Self.exposureAuto]!.refusal = EINVAL
        mock.controls[Self.backlight]!.refusal = EBUSY
        let (streaming, report) = Self.open(mock)
        #expect(streaming)
        let controls = try #require(report)
        #expect(controls.exposureMode.outcome == .refused(.invalidArgument))
        #expect(controls.backlightCompensation.outcome == .refused(.busy))
        #expect(controls.exposurePriority.outcome == .set(0))
        #expect(controls.autogain.outcome == .set(1))
        #expect(mock.controls[Self.exposureAbsolute]?.value == 250, "auto exposure refused: exposure is left alone")
        #expect(controls.description == "auto exposure refused (\(Errno.invalidArgument)), frame rate kept (exposure_auto_priority 0), backlight compensation refused (\(Errno.busy)), autogain on")
    }

    @Test func everySetRefusedStillOpens() throws {
        let mock = Self.uvcWebcam()
        mock.ioctlFailures[PW_VIDIOC_S_CTRL] = [EINVAL, EBUSY, EIO, EAGAIN]
        let (streaming, report) = Self.open(mock)
        #expect(streaming)
        let controls = try #require(report)
        #expect(controls.exposureMode.outcome == .refused(.invalidArgument))
        #expect(controls.exposurePriority.outcome == .refused(.busy))
        #expect(controls.backlightCompensation.outcome == .refused(.ioError))
        #expect(controls.autogain.outcome == .refused(.wouldBlock))
        #expect(mock.controlWrites.isEmpty)
    }

    @Test func readOnlyInactiveAndDisabledControlsAreNotWritten() throws {
        let mock = Self.uvcWebcam()
        mock.controls[Self.autogain]!.flags = UInt32(V4L2_CTRL_FLAG_READ_ONLY)
        mock.controls[Self.backlight]!.flags = UInt32(V4L2_CTRL_FLAG_INACTIVE)
        mock.controls[Self.exposurePriority]!.flags = UInt32(V4L2_CTRL_FLAG_DISABLED)
        let (streaming, report) = Self.open(mock)
        #expect(streaming)
        let controls = try #require(report)
        #expect(controls.autogain.outcome == .readOnly)
        #expect(controls.backlightCompensation.outcome == .inactive)
        #expect(controls.exposurePriority.outcome == .notOffered)
        #expect(Self.writes(mock) == [Self.exposureAuto: Self.aperturePriority])
        #expect(controls.description == "auto exposure (aperture priority), backlight compensation inactive, left as it is, autogain read-only, left as it is; not offered by this camera: exposure priority")
    }

    @Test func withAutoControlsOffNothingIsQueriedOrWritten() throws {
        let mock = Self.uvcWebcam()
        let (streaming, report) = Self.open(mock, autoControls: false)
        #expect(streaming)
        #expect(try #require(report) == .keptCameraSettings)
        #expect(!mock.requests.contains(PW_VIDIOC_QUERYCTRL) && !mock.requests.contains(PW_VIDIOC_S_CTRL))
        #expect(mock.controls[Self.exposureAuto]?.value == Self.manual)
        #expect(report?.description == "left as the camera has them (camera.auto_controls = false)")
    }

    @Test func theDriversAnswerIsWhatIsRecorded() throws {
        let mock = MockV4L2()
        // A driver whose exposure priority cannot be turned off clamps the 0 asked to its 1.
        mock.controls = [Self.exposurePriority: .init(minimum: 1, maximum: 1, value: 1)]
        let controls = try #require(Self.open(mock).controls)
        #expect(controls.exposurePriority == CameraControlState(.set(1), minimum: 1, maximum: 1))
        #expect(controls.description.hasPrefix("exposure_auto_priority 1: the frame rate may drop in the dark;"))
    }

    @Test func backlightCompensationGoesToTheMiddleOfItsRangeOnItsStep() {
        func middle(_ minimum: Int32, _ maximum: Int32, step: Int32 = 1, type: v4l2_ctrl_type = V4L2_CTRL_TYPE_INTEGER) -> Int32 {
            var query = v4l2_queryctrl()
            query.type = type.rawValue
            query.minimum = minimum
            query.maximum = maximum
            query.step = step
            return CameraControls.middle(of: query)
        }
        #expect(middle(0, 1) == 1)
        #expect(middle(0, 1, type: V4L2_CTRL_TYPE_BOOLEAN) == 1)
        #expect(middle(0, 2) == 1)
        #expect(middle(0, 255) == 127)
        #expect(middle(1, 3) == 2)
        #expect(middle(0, 10, step: 4) == 4)
        #expect(middle(5, 5) == 5)
        #expect(middle(Int32.min, Int32.max) == -1)
    }

    @Test func reopeningAfterALossSetsTheControlsAgain() {
        let mock = Self.uvcWebcam()
        var camera = CameraSource(configuration: CameraConfiguration(device: "/dev/video0", retryInitialMilliseconds: 100), calls: mock)
        #expect(mock.controlWrites.count == 4)
        mock.unplug()
        _ = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used }
        mock.plugIn()
        // A replugged camera starts from its own defaults again.
        mock.controls[Self.exposureAuto]!.value = Self.manual
        var outcome = FrameOutcome.timedOut
        for _ in 0..<5 where outcome != .cameraBack { outcome = camera.nextFrame(timeoutMilliseconds: 200) { _ in .used } }
        #expect(outcome == .cameraBack)
        #expect(mock.controlWrites.count == 8)
        #expect(mock.controls[Self.exposureAuto]?.value == Self.aperturePriority)
        let controls = camera.controls
        #expect(controls?.exposureMode.outcome == .set(Self.aperturePriority))
    }

    @Test func aPlanQueriesWithoutWriting() throws {
        let mock = Self.uvcWebcam()
        let plan = try CameraControls.plan(path: "/dev/video0", calls: mock)
        #expect(plan.mode == .planned)
        #expect(plan.exposureMode.outcome == .set(Self.aperturePriority))
        #expect(plan.backlightCompensation == CameraControlState(.set(1), minimum: 0, maximum: 2))
        #expect(!mock.requests.contains(PW_VIDIOC_S_CTRL))
        #expect(mock.closeCount == 1)
    }
}
