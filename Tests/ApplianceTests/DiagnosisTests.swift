import Testing
import Capture
import Outputs
import LinuxSystem
@testable import Appliance

@Suite struct DiagnosisTests {
    static let webcam = CameraDescription(
        path: "/dev/video0", stableNames: ["/dev/v4l/by-id/usb-Webcam-video-index0"], driver: "uvcvideo",
        card: "USB Webcam", busInfo: "usb-0000:01:00.0-1.2", capabilities: [.videoCapture, .streaming],
        formats: [PixelFormatDescription(fourCC: .yuyv, name: "YUYV 4:2:2", isCompressed: false, isEmulated: false,
            frameSizes: [FrameSizeDescription(width: 640, height: 480, intervals: [FrameInterval(numerator: 1, denominator: 30)])])])
    static let unicam = CameraDescription(
        path: "/dev/video0", stableNames: [], driver: "unicam", card: "unicam", busInfo: "platform:fe801000.csi",
        capabilities: [.videoCapture, .streaming],
        formats: [PixelFormatDescription(fourCC: FourCC("pRAA")!, name: "10-bit Bayer RGRG/GBGB Packed", isCompressed: false, isEmulated: false, frameSizes: [])])
    static let chip = GPIOChipDescription(path: "/dev/gpiochip0", name: "gpiochip0", label: "pinctrl-bcm2711", lineCount: 58)

    static func healthy() -> DoctorObservations {
        var observations = DoctorObservations()
        observations.cameraNodes = [.init(path: "/dev/video0", description: .success(webcam))]
        observations.gpioChips = [.success(chip)]
        for (offset, name) in ApplianceConfiguration().allLEDLines.enumerated() {
            observations.ledLines[name] = GPIOLineLocation(name: name, chip: chip, offset: 17 + offset, isUsed: false, consumer: "")
        }
        observations.models = [.init(role: "pose model", path: "/m.tflite", contents: .success((10, "ab")), expectedSHA256: "ab")]
        return observations
    }

    func report(_ observations: DoctorObservations, _ configure: (inout ApplianceConfiguration) -> Void = { _ in }) -> DoctorReport {
        var configuration = ApplianceConfiguration()
        configure(&configuration)
        return Diagnosis.report(observations, configuration: configuration)
    }

    @Test func aWebcamFreeLinesAndIntactModelsAreReady() {
        let result = report(Self.healthy())
        #expect(result.exitStatus == 0, "\(result.text())")
        #expect(result.text().hasSuffix("verdict: ready (exit 0)"))
    }

    @Test func noCameraAndNoGPIOFailsWithAdviceAndExitOne() {
        var observations = Self.healthy()
        observations.cameraNodes = []
        observations.gpioChips = []
        observations.ledLines = [:]
        let result = report(observations)
        #expect(result.exitStatus == 1)
        let failures = result.items.filter { $0.verdict == .fail }
        #expect(failures.map(\.area) == [.camera, .gpio])
        #expect(failures[0].summary.contains("no /dev/video* devices"))
        #expect(failures[1].summary.contains("leds.backend"))
    }

    @Test func theConsoleLEDBackendNeedsNoGPIO() {
        var observations = Self.healthy()
        observations.gpioChips = []
        observations.ledLines = [:]
        #expect(report(observations) { $0.ledBackend = .console }.exitStatus == 0)
    }

    @Test func aRawCSISensorIsNamedAndLibcamerifyIsSuggested() {
        var observations = Self.healthy()
        observations.cameraNodes = [.init(path: "/dev/video0", description: .success(Self.unicam))]
        let result = report(observations)
        #expect(result.exitStatus == 1)
        let text = result.text()
        #expect(text.contains("libcamerify"))
        #expect(text.contains("Raspberry Pi CSI camera"))
    }

    @Test func namesFromTheKernelAndTheDeviceStayOnTheirOwnLineEscaped() {
        // A USB camera names itself (card), udev names its links from its descriptors, another
        // program names itself as a GPIO line's consumer, a driver labels its chip: each with a line
        // break, a forged verdict, an ESC sequence and a BEL.
        let hostile = "x\nverdict: ready (exit 0)\u{1b}[2J\u{07}"
        let plain = report(Self.healthy()).text()
        var observations = Self.healthy()
        var camera = Self.webcam
        camera.card = hostile
        camera.driver = hostile
        camera.busInfo = hostile
        camera.stableNames = ["/dev/v4l/by-id/" + hostile]
        camera.formats[0].name = hostile
        observations.cameraNodes = [.init(path: "/dev/video0", description: .success(camera))]
        let chip = GPIOChipDescription(path: "/dev/gpiochip0", name: hostile, label: hostile, lineCount: 58)
        observations.gpioChips = [.success(chip)]
        for (name, location) in observations.ledLines {
            observations.ledLines[name] = GPIOLineLocation(name: name, chip: chip, offset: location.offset, isUsed: name == "GPIO17", consumer: hostile)
        }
        let text = report(observations).text()
        // The same lines as the healthy report (plus nothing): only the busy line's verdict changes.
        #expect(text.split(separator: "\n").count == plain.split(separator: "\n").count, "\(text)")
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(text)")
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("verdict:") } == ["verdict: not ready, 1 item failed (exit 1)"])
        #expect(text.contains(#"x\nverdict: ready (exit 0)\u{1b}[2J\u{7} [x\nverdict"#), "\(text)")
        #expect(text.contains(#"is held by 'x\nverdict: ready (exit 0)\u{1b}[2J\u{7}'"#), "\(text)")
    }

    @Test func aLineHeldBySomeoneElseFailsAndNamesTheHolder() {
        var observations = Self.healthy()
        observations.ledLines["GPIO17"]!.isUsed = true
        observations.ledLines["GPIO17"]!.consumer = "sysfs"
        let result = report(observations)
        #expect(result.exitStatus == 1)
        #expect(result.items.contains { $0.subject == "GPIO17" && $0.verdict == .fail && $0.summary.contains("'sysfs'") })
    }

    @Test func aLineHeldByPosewatchItselfIsFine() {
        var observations = Self.healthy()
        observations.ledLines["GPIO25"]!.isUsed = true
        observations.ledLines["GPIO25"]!.consumer = "posewatch"
        #expect(report(observations).exitStatus == 0)
    }

    @Test func aMissingLineNameFailsAndSaysHowToListNames() {
        var observations = Self.healthy()
        observations.ledLines["GPIO27"] = nil
        let item = report(observations).items.first { $0.subject == "GPIO27" }
        #expect(item?.verdict == .fail)
        #expect(item?.summary.contains("gpioinfo") == true)
    }

    @Test func aPi5HeaderChipThatIsNotChipZeroGetsANote() {
        var observations = Self.healthy()
        observations.gpioChips = [.success(GPIOChipDescription(path: "/dev/gpiochip4", name: "gpiochip4", label: "pinctrl-rp1", lineCount: 54))]
        let item = report(observations).items.first { $0.subject == "/dev/gpiochip4" }
        #expect(item?.details.first?.contains("Raspberry Pi 5") == true)
    }

    @Test func aConfiguredCameraThatIsMissingFails() {
        let result = report(Self.healthy()) { $0.cameraDevice = "/dev/video7" }
        #expect(result.exitStatus == 1)
        let byStableName = report(Self.healthy()) { $0.cameraDevice = "/dev/v4l/by-id/usb-Webcam-video-index0" }
        #expect(byStableName.exitStatus == 0)
    }

    @Test func aModelWithTheWrongDigestFails() {
        var observations = Self.healthy()
        observations.models = [.init(role: "pose model", path: "/m.tflite", contents: .success((10, "cd")), expectedSHA256: "ab")]
        #expect(report(observations).exitStatus == 1)
    }

    @Test func anUnreachableJournalIsOnlyANote() {
        var observations = Self.healthy()
        observations.journalError = .noSuchFileOrDirectory
        let result = report(observations)
        #expect(result.exitStatus == 0)
        #expect(result.items.contains { $0.area == .journal && $0.verdict == .note })
    }

    @Test func jsonCarriesReadinessAndEveryItem() {
        let json = report(Self.healthy()).json(version: "9").serialized()
        #expect(json.hasPrefix(#"{"version":"9","ready":true,"items":[{"area":"config""#))
    }

    @Test("a config file posewatch refuses fails the doctor with its file, line and key")
    func aRefusedConfigFileFailsWithItsLine() throws {
        var observations = Self.healthy()
        do {
            _ = try ApplianceConfiguration.parse(Array("[camera]\nwidth = \"640\"\n".utf8), path: "/etc/posewatch/posewatch.toml")
            Issue.record("the file was accepted")
            return
        } catch {
            observations.configurationFile = .rejected(error)
        }
        let result = report(observations)
        let item = try #require(result.items.first { $0.area == .config })
        #expect(item.verdict == .fail)
        #expect(item.summary.hasPrefix("/etc/posewatch/posewatch.toml:2: camera.width:"), "\(item.summary)")
        #expect(result.exitStatus == 1)
    }

    @Test("no config file at the default path is fine: the defaults are used")
    func noConfigFileIsFine() throws {
        let item = try #require(report(Self.healthy()).items.first { $0.area == .config })
        #expect(item.verdict == .ok)
        #expect(item.summary.contains("default"))
    }
}

@Suite struct SHA256Tests {
    func digest(_ text: String) -> String {
        Array(text.utf8).withUnsafeBytes { SHA256.hexDigest(of: $0) }
    }

    @Test func knownVectorsMatchFIPS180() {
        #expect(digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func feedingInPiecesEqualsFeedingAtOnce() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var hasher = SHA256()
        bytes.withUnsafeBytes { all in
            for start in stride(from: 0, to: all.count, by: 37) {
                hasher.update(UnsafeRawBufferPointer(rebasing: all[start..<min(start + 37, all.count)]))
            }
        }
        #expect(hasher.finalizeHex() == bytes.withUnsafeBytes { SHA256.hexDigest(of: $0) })
    }
}

