import Testing
import CV4L2
import LinuxSystem
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

@Suite struct CameraDeviceTests {
    static func configuration(fps: Double = 30, buffers: Int = 4) -> CameraConfiguration {
        CameraConfiguration(device: "/dev/video0", request: CaptureRequest(framesPerSecond: fps), bufferCount: buffers)
    }

    @Test func openingNegotiatesTheSmallestBigEnoughSizeAtTheModelRateAndQueuesEveryBuffer() {
        let mock = MockV4L2()
        let camera = CameraSource(configuration: Self.configuration(fps: 15), calls: mock)
        do { let check = camera.isStreaming; #expect(check, "camera.isStreaming") }
        #expect(camera.mode == CaptureMode(fourCC: .yuyv, width: 320, height: 240,
                                           cameraInterval: FrameInterval(numerator: 1, denominator: 15), targetFramesPerSecond: 15))
        #expect(mock.lastFormat.fmt.pix.width == 320 && mock.lastFormat.fmt.pix.height == 240)
        #expect(mock.lastFormat.fmt.pix.pixelformat == FourCC.yuyv.rawValue)
        #expect(mock.lastParameters.parm.capture.timeperframe.denominator == 15)
        #expect(mock.queueLog == [0, 1, 2, 3])
        #expect(mock.streaming)
        do { let check = camera.layout == FrameLayout(pixelFormat: .yuyv, width: 320, height: 240); #expect(check, "camera.layout == FrameLayout(pixelFormat: .yuyv, width: 320, height: 240)") }
    }

    @Test func theDefaultRingIsTheCoreCountUpToFourPlusOne() {
        #expect(CameraConfiguration.defaultBufferCount(cores: 1) == 2)
        #expect(CameraConfiguration.defaultBufferCount(cores: 2) == 3)
        #expect(CameraConfiguration.defaultBufferCount(cores: 4) == 5)
        #expect(CameraConfiguration.defaultBufferCount(cores: 64) == 5)
    }

    @Test func grabDeliversOnlyTheNewestReadyFrameAndRequeuesTheOlderOnesInOrder() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        let first = mock.produce(), second = mock.produce(), third = mock.produce()
        #expect([first, second, third] == [0, 1, 2])
        var seen: [UInt64] = []
        var marker: UInt8 = 0
        let outcome = camera.nextFrame(timeoutMilliseconds: 100) { frame in
            seen.append(frame.sequence)
            marker = frame.bytes[0]
            // While the loop holds the newest, the two older ones are already back with the driver.
            #expect(mock.driverQueue == [3, 0, 1])
            return .used
        }
        #expect(outcome == .frame)
        #expect(seen == [2])
        #expect(marker == 2)
        #expect(mock.queueLog == [0, 1, 2, 3, 0, 1, 2])
        do { let check = camera.statistics.delivered == 1; #expect(check, "camera.statistics.delivered == 1") }
        do { let check = camera.statistics.droppedLate == 2; #expect(check, "camera.statistics.droppedLate == 2") }
    }

    @Test func gapsInTheDriversSequenceNumbersCountAsDrops() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        mock.produce()
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame") }
        mock.produce(skipSequences: 3)
        var sequence: UInt64 = 0
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { sequence = $0.sequence; return .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { sequence = $0.sequence; return .used } == .frame") }
        #expect(sequence == 4)
        do { let check = camera.statistics.droppedByDriver == 3; #expect(check, "camera.statistics.droppedByDriver == 3") }
        do { let check = camera.statistics.dropped == 3; #expect(check, "camera.statistics.dropped == 3") }
    }

    /// libv4l2 prints every failed DQBUF to stderr, which is the journal: draining the ring must
    /// stop when poll says nothing is left, not when DQBUF says EAGAIN.
    @Test func drainingToTheNewestNeverAsksForABufferThatIsNotThere() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        for _ in 0..<3 { mock.produce() }
        var sequence: UInt64 = 99
        let delivered = camera.nextFrame(timeoutMilliseconds: 10) { sequence = $0.sequence; return .used } == .frame
        #expect(delivered)
        #expect(sequence == 2)
        #expect(camera.statistics.droppedLate == 2)
        mock.produce()
        let next = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame
        #expect(next)
        #expect(mock.wouldBlockDequeues == 0)
    }

    @Test func interruptedCallsAreRetriedAndWouldBlockMeansNothingNew() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        mock.produce()
        mock.pollFailures = [EINTR]
        mock.ioctlFailures[PW_VIDIOC_DQBUF] = [EINTR, EINTR]
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame") }
        // poll says readable but DQBUF says EAGAIN (another reader raced us): not an error.
        mock.produce()
        mock.ioctlFailures[PW_VIDIOC_DQBUF] = [EAGAIN]
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .nothingNew; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .nothingNew") }
        do { let check = camera.isStreaming; #expect(check, "camera.isStreaming") }
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame") }
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .timedOut; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .timedOut") }
    }

    @Test func brokenFramesAreSkippedAndCountedNotErrors() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        mock.produce()
        mock.produce(bytesUsed: 100)                               // too short
        mock.produce(flags: UInt32(V4L2_BUF_FLAG_ERROR))           // the driver says corrupt
        var sequence: UInt64 = 99
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { sequence = $0.sequence; return .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { sequence = $0.sequence; return .used } == .frame") }
        #expect(sequence == 0)
        do { let check = camera.statistics.broken == 2; #expect(check, "camera.statistics.broken == 2") }
        do { let check = camera.statistics.droppedLate == 0; #expect(check, "camera.statistics.droppedLate == 0") }
        mock.produce()
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .broken } == .brokenFrame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .broken } == .brokenFrame") }
        do { let check = camera.statistics.broken == 3; #expect(check, "camera.statistics.broken == 3") }
        do { let check = camera.statistics.delivered == 1; #expect(check, "camera.statistics.delivered == 1") }
        #expect(mock.driverQueue.count == 4)
    }

    @Test func aTruncatedJPEGFrameIsBroken() {
        let mock = MockV4L2(formats: [MockV4L2.webcamFormats[1]])
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        do { let check = camera.layout?.pixelFormat == .mjpeg; #expect(check, "camera.layout?.pixelFormat == .mjpeg") }
        let index = mock.produce(bytesUsed: 1000)!
        let bytes = mock.mapped[index]!.assumingMemoryBound(to: UInt8.self)
        bytes[0] = 0xFF; bytes[1] = 0xD8   // SOI but no EOI at the end
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .nothingNew; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .nothingNew") }
        do { let check = camera.statistics.broken == 1; #expect(check, "camera.statistics.broken == 1") }
    }

    @Test func aDeviceThatRefusesTheFrameIntervalIsDecimatedByTimestamp() {
        let mock = MockV4L2()
        mock.acceptsFrameInterval = false
        mock.defaultInterval = FrameInterval(numerator: 1, denominator: 30)
        var camera = CameraSource(configuration: Self.configuration(fps: 10), calls: mock)
        do { let check = camera.frameIntervalFallback; #expect(check, "camera.frameIntervalFallback") }
        do { let check = camera.cameraInterval == FrameInterval(numerator: 1, denominator: 30); #expect(check, "camera.cameraInterval == FrameInterval(numerator: 1, denominator: 30)") }
        var delivered: [UInt64] = []
        for _ in 0..<12 {
            mock.produce()
            _ = camera.nextFrame(timeoutMilliseconds: 10) { delivered.append($0.sequence); return .used }
        }
        #expect(delivered == [0, 3, 6, 9])
        do { let check = camera.statistics.decimated == 8; #expect(check, "camera.statistics.decimated == 8") }
    }

    @Test func aDriverThatSnapsToAFasterRateIsDecimatedDownToTheModelRate() {
        let mock = MockV4L2()
        mock.snapInterval = FrameInterval(numerator: 1, denominator: 30)
        var camera = CameraSource(configuration: Self.configuration(fps: 15), calls: mock)
        do { let check = camera.frameIntervalFallback; #expect(!check) }
        do { let check = camera.cameraInterval; #expect(check == FrameInterval(numerator: 1, denominator: 30)) }
        var delivered = 0
        for _ in 0..<30 {
            mock.produce()
            if camera.nextFrame(timeoutMilliseconds: 10, { _ in .used }) == .frame { delivered += 1 }
        }
        #expect(delivered == 15)
    }

    @Test func theNearestFasterRateIsAskedForWhenTheModelRateIsNotOffered() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: Self.configuration(fps: 20), calls: mock)
        do { let check = camera.mode?.cameraInterval == FrameInterval(numerator: 1, denominator: 30); #expect(check, "camera.mode?.cameraInterval == FrameInterval(numerator: 1, denominator: 30)") }
        #expect(mock.lastParameters.parm.capture.timeperframe.denominator == 30)
        var count = 0
        for _ in 0..<30 {
            mock.produce()
            if camera.nextFrame(timeoutMilliseconds: 10, { _ in .used }) == .frame { count += 1 }
        }
        #expect(count == 20)
    }

    @Test func losingTheDeviceIsReportedOnceThenRetriedWithBackOffUntilItIsBack() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        mock.produce()
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame") }
        mock.unplug()
        let lost = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used }
        guard case .cameraLost(let error) = lost else { Issue.record("expected cameraLost, got \(lost)"); return }
        #expect(error == .systemCall(call: "capture", subject: "/dev/video0", errno: .noSuchDevice))
        do { let check = !camera.isStreaming; #expect(check, "!camera.isStreaming") }
        #expect(mock.closeCount == 1)
        #expect(mock.unmappedCount == mock.mappedCount)

        // While it is gone: quiet timeouts, with the re-open attempts spaced 250, 500, 1000 ms …
        var outcomes: [FrameOutcome] = []
        for _ in 0..<40 { outcomes.append(camera.nextFrame(timeoutMilliseconds: 100) { _ in .used }) }
        #expect(outcomes.allSatisfy { $0 == .timedOut })
        do { let check = camera.statistics.lossEpisodes == 1; #expect(check, "camera.statistics.lossEpisodes == 1") }
        let opensWhileGone = mock.openCount
        #expect(opensWhileGone == 1)   // ENOENT attempts do not count as opens in the mock
        mock.plugIn()
        var back: FrameOutcome = .timedOut
        for _ in 0..<60 where back == .timedOut { back = camera.nextFrame(timeoutMilliseconds: 100) { _ in .used } }
        #expect(back == .cameraBack)
        do { let check = camera.isStreaming; #expect(check, "camera.isStreaming") }
        #expect(mock.openCount == 2)
        mock.produce()
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame") }
        do { let check = camera.statistics.delivered == 2; #expect(check, "camera.statistics.delivered == 2") }
        do { let check = camera.statistics.recoveries == 1; #expect(check, "camera.statistics.recoveries == 1") }
        do { let check = camera.statistics.lossEpisodes == 1; #expect(check, "camera.statistics.lossEpisodes == 1") }
    }

    @Test func reopenAttemptsBackOffExponentiallyUpToTheMaximum() {
        let mock = MockV4L2()
        mock.present = false
        var camera = CameraSource(configuration: CameraConfiguration(device: "/dev/video0", retryInitialMilliseconds: 100,
                                                                      retryMaximumMilliseconds: 800), calls: mock)
        guard case .cameraLost = camera.nextFrame(timeoutMilliseconds: 10_000, { _ in .used }) else {
            Issue.record("a camera missing at start-up is the first loss episode"); return
        }
        for _ in 0..<8 {
            let outcome = camera.nextFrame(timeoutMilliseconds: 10_000) { _ in .used }
            #expect(outcome == .timedOut)
        }
        let attempts = mock.openAttemptTimes.map { $0 / 1_000_000 }
        let gaps = zip(attempts.dropFirst(), attempts).map { $0 - $1 }
        // The first attempt is in init; then 100 ms, doubling, capped at 800 ms.
        #expect(gaps == [100, 200, 400, 800, 800, 800, 800, 800])
    }

    @Test func aCameraThatStopsDeliveringIsTreatedAsLostAfterTheStallTimeout() {
        let mock = MockV4L2()
        var camera = CameraSource(configuration: CameraConfiguration(device: "/dev/video0", stallTimeoutMilliseconds: 1000), calls: mock)
        var outcome = FrameOutcome.timedOut
        var calls = 0
        while outcome == .timedOut && calls < 100 {
            outcome = camera.nextFrame(timeoutMilliseconds: 200) { _ in .used }
            calls += 1
        }
        #expect(outcome == .cameraLost(.stalled(path: "/dev/video0", milliseconds: 1000)))
        #expect(calls == 5)
        #expect(mock.closeCount == 1)
    }

    @Test func aSourceChangeEventRestartsCaptureAtOnce() {
        let mock = MockV4L2()
        mock.supportsEvents = true
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        mock.produce()
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame") }
        mock.pendingEvents = [UInt32(V4L2_EVENT_SOURCE_CHANGE)]
        mock.produce()
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .cameraLost(.sourceChanged(path: "/dev/video0")); #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .cameraLost(.sourceChanged(path: '/dev/video0'))") }
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .cameraBack; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .cameraBack") }
        #expect(mock.openCount == 2)
        #expect(mock.sleeps.isEmpty)
        mock.produce()
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .frame") }
    }

    @Test func otherEventsAreDrainedAndIgnored() {
        let mock = MockV4L2()
        mock.supportsEvents = true
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        mock.pendingEvents = [UInt32(V4L2_EVENT_EOS)]
        do { let check = camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .nothingNew; #expect(check, "camera.nextFrame(timeoutMilliseconds: 10) { _ in .used } == .nothingNew") }
        #expect(mock.pendingEvents.isEmpty)
        do { let check = camera.isStreaming; #expect(check, "camera.isStreaming") }
    }

    @Test func aNodeWithoutVideoCaptureIsNotACamera() {
        let mock = MockV4L2()
        mock.capabilities = UInt32(V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING)
        var camera = CameraSource(configuration: Self.configuration(), calls: mock)
        guard case .cameraLost(.notACamera) = camera.nextFrame(timeoutMilliseconds: 10, { _ in .used }) else {
            Issue.record("expected notACamera"); return
        }
        #expect(mock.closeCount == 1)
    }

    @Test func theDequeuedBufferAPIHandsOutOneOwnerThatRequeueConsumes() throws {
        let mock = MockV4L2()
        var device = try CameraDevice(path: "/dev/video0", configuration: Self.configuration(), calls: mock)
        mock.produce()
        mock.produce()
        guard let buffer = try device.dequeueNewest(timeoutMilliseconds: 10) else { Issue.record("no buffer"); return }
        #expect(buffer.index == 1)
        #expect(buffer.sequence == 1)
        do { let check = device.ring.queued[1] == false; #expect(check, "device.ring.queued[1] == false") }
        try device.requeue(buffer)
        // `buffer` is consumed: using it again does not compile.
        do { let check = device.ring.queued[1]; #expect(check, "device.ring.queued[1]") }
        #expect(mock.queueLog.suffix(2) == [0, 1])
    }
}

@Suite struct CaptureModeSelectionTests {
    static func format(_ fourCC: FourCC, emulated: Bool = false, _ sizes: [(Int, Int, [UInt32])]) -> PixelFormatDescription {
        PixelFormatDescription(fourCC: fourCC, name: "", isCompressed: fourCC == .mjpeg, isEmulated: emulated,
                               frameSizes: sizes.map { FrameSizeDescription(width: $0.0, height: $0.1,
                                    intervals: $0.2.map { FrameInterval(numerator: 1, denominator: $0) }) })
    }

    @Test func theSmallestSizeAtLeastTheModelInputIsChosen() {
        let mode = CaptureModeSelection.select(from: [Self.format(.yuyv, [(1280, 720, [30]), (640, 480, [30]), (320, 240, [30]), (160, 120, [30])])],
                                               request: CaptureRequest(framesPerSecond: 30))
        #expect(mode?.width == 320 && mode?.height == 240)
        #expect(mode?.decimation == 1)
    }

    @Test func theExactRateWinsOverFasterOnes() {
        let interval = CaptureModeSelection.chooseInterval([30, 20, 15, 10].map { FrameInterval(numerator: 1, denominator: $0) }, framesPerSecond: 15)
        #expect(interval == FrameInterval(numerator: 1, denominator: 15))
    }

    @Test func theNearestFasterRateIsChosenWhenTheExactOneIsMissing() {
        let interval = CaptureModeSelection.chooseInterval([60, 30, 5].map { FrameInterval(numerator: 1, denominator: $0) }, framesPerSecond: 20)
        #expect(interval == FrameInterval(numerator: 1, denominator: 30))
        let mode = CaptureMode(fourCC: .yuyv, width: 320, height: 240, cameraInterval: interval, targetFramesPerSecond: 20)
        #expect(mode.decimation == 1.5)
        #expect(mode.description == "YUYV 320x240, camera 30 fps, model 20 fps, keeps 1 in 1.5 by timestamp")
    }

    @Test func aSizeThatMeetsTheRateBeatsASmallerOneThatDoesNot() {
        let mode = CaptureModeSelection.select(from: [Self.format(.yuyv, [(640, 480, [30]), (320, 240, [10])])],
                                               request: CaptureRequest(framesPerSecond: 30))
        #expect(mode?.width == 640)
    }

    @Test func nativeYUYVIsPreferredToMJPEGAndToEmulatedRGB() {
        let formats = [Self.format(.mjpeg, [(320, 240, [30])]), Self.format(.rgb24, emulated: true, [(320, 240, [30])]),
                       Self.format(.yuyv, [(320, 240, [30])])]
        #expect(CaptureModeSelection.select(from: formats, request: CaptureRequest())?.fourCC == .yuyv)
        // …but MJPEG when only it reaches the rate.
        let slowYUYV = [Self.format(.yuyv, [(320, 240, [5])]), Self.format(.mjpeg, [(320, 240, [30])])]
        #expect(CaptureModeSelection.select(from: slowYUYV, request: CaptureRequest())?.fourCC == .mjpeg)
    }

    @Test func configOverridesPinFormatAndSize() {
        let formats = [Self.format(.yuyv, [(640, 480, [30]), (320, 240, [30])]), Self.format(.mjpeg, [(640, 480, [30])])]
        let mode = CaptureModeSelection.select(from: formats, request: CaptureRequest(format: .mjpeg, width: 640, height: 480))
        #expect(mode?.fourCC == .mjpeg && mode?.width == 640)
        #expect(CaptureModeSelection.select(from: formats, request: CaptureRequest(format: .nv12)) == nil)
    }

    @Test func aCameraSmallerThanTheModelGivesItsLargestSize() {
        let mode = CaptureModeSelection.select(from: [Self.format(.yuyv, [(176, 144, [30]), (160, 120, [30])])], request: CaptureRequest())
        #expect(mode?.width == 176)
    }

    @Test func aSlowCameraIsUsedAtItsFastestRateAndSaysSo() {
        let mode = CaptureModeSelection.select(from: [Self.format(.yuyv, [(320, 240, [5, 10])])], request: CaptureRequest(framesPerSecond: 30))
        #expect(mode?.cameraInterval == FrameInterval(numerator: 1, denominator: 10))
        #expect(mode?.meetsTargetRate == false)
        #expect(mode?.description.contains("slower than the model's 30 fps") == true)
    }

    @Test func unconvertibleFormatsAreIgnored() {
        #expect(CaptureModeSelection.select(from: [Self.format(.h264, [(640, 480, [30])])], request: CaptureRequest()) == nil)
    }
}

@Suite struct FrameDecimatorTests {
    static func run(camera: Double, target: Double, frames: Int) -> [Int] {
        var decimator = FrameDecimator(cameraFramesPerSecond: camera, targetFramesPerSecond: target)
        let interval = 1e9 / camera
        return (0..<frames).filter { decimator.accept(MonotonicInstant(nanoseconds: Int64(Double($0) * interval))) }
    }

    @Test func halvingTheRateKeepsEveryOtherFrame() {
        #expect(Self.run(camera: 30, target: 15, frames: 8) == [0, 2, 4, 6])
    }

    @Test func aNonIntegerRatioKeepsTheTargetRateOnAverage() {
        #expect(Self.run(camera: 30, target: 20, frames: 300).count == 200)
        #expect(Self.run(camera: 25, target: 20, frames: 250).count == 200)
    }

    @Test func aCameraAtTheTargetRateKeepsEverything() {
        #expect(Self.run(camera: 30, target: 30, frames: 10).count == 10)
    }

    @Test func afterAGapTheRhythmRestartsInsteadOfCatchingUp() {
        var decimator = FrameDecimator(intervalNanoseconds: 100)
        let kept = [0, 1000, 1050, 1100].map { decimator.accept(MonotonicInstant(nanoseconds: $0)) }
        #expect(kept == [true, true, false, true])
    }
}

@Suite struct CameraSelectionTests {
    static func camera(_ path: String, names: [String], usable: Bool = true) -> CameraDescription {
        CameraDescription(path: path, stableNames: names, driver: usable ? "uvcvideo" : "unicam", card: "", busInfo: "",
                          capabilities: [.videoCapture, .streaming],
                          formats: [PixelFormatDescription(fourCC: usable ? .yuyv : FourCC("pRAA")!, name: "", isCompressed: false,
                                                           isEmulated: false, frameSizes: [])])
    }

    @Test func theConfiguredDeviceWinsThenTheUdevNameThenTheFirstUsableByID() {
        let raw = Self.camera("/dev/video0", names: [], usable: false)
        let webcam = Self.camera("/dev/video2", names: ["/dev/v4l/by-path/pci-0", "/dev/v4l/by-id/usb-Cam-video-index0"])
        let named = Self.camera("/dev/video4", names: ["/dev/posewatch-camera"])
        #expect(CameraSelection.resolve(configured: "/dev/video9", cameras: [raw, webcam]) == "/dev/video9")
        #expect(CameraSelection.resolve(configured: nil, cameras: [raw, webcam, named]) == "/dev/posewatch-camera")
        #expect(CameraSelection.resolve(configured: nil, cameras: [raw, webcam]) == "/dev/v4l/by-id/usb-Cam-video-index0")
        #expect(CameraSelection.resolve(configured: nil, cameras: [raw, Self.camera("/dev/video6", names: [])]) == "/dev/video6")
        #expect(CameraSelection.resolve(configured: nil, cameras: [raw]) == nil)
    }
}
