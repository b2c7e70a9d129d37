import Testing
import CV4L2
@testable import Capture

@Suite struct FourCCTests {
    @Test func packingFourCharactersMatchesTheKernelsMacro() {
        #expect(FourCC("YUYV") == .yuyv)
        #expect(FourCC("MJPG") == .mjpeg)
        #expect(FourCC("pRAA")?.rawValue == PW_PIX_FMT_SRGGB10P)
    }

    @Test func descriptionSpellsTheCodeAndMarksBigEndian() {
        #expect(FourCC.yuyv.description == "YUYV")
        #expect(FourCC(rawValue: FourCC("RGBR")!.rawValue | 1 << 31).description == "RGBR-BE")
        #expect(FourCC(rawValue: 0x0102_0304).description == "????")
    }

    @Test func onlyFourAsciiCharactersMakeACode() {
        #expect(FourCC("YUY") == nil)
        #expect(FourCC("YUYV2") == nil)
        #expect(FourCC("YUYé") == nil)
    }

    @Test func bayerFormatsAreRecognisedAndPictureFormatsAreNot() {
        #expect(FourCC("RGGB")!.isBayer)
        #expect(FourCC("pBAA")!.isBayer)
        #expect(!FourCC.yuyv.isBayer)
        #expect(!FourCC.mjpeg.isBayer)
    }
}

@Suite struct CameraDescriptionTests {
    static func format(_ code: String, name: String = "", emulated: Bool = false) -> PixelFormatDescription {
        PixelFormatDescription(fourCC: FourCC(code)!, name: name, isCompressed: code == "MJPG", isEmulated: emulated,
                               frameSizes: [FrameSizeDescription(width: 640, height: 480, intervals: [FrameInterval(numerator: 1, denominator: 30)])])
    }

    static func camera(driver: String, capabilities: CameraCapabilities, formats: [PixelFormatDescription]) -> CameraDescription {
        CameraDescription(path: "/dev/video0", stableNames: [], driver: driver, card: "Test", busInfo: "test",
                          capabilities: capabilities, formats: formats)
    }

    @Test func aUVCWebcamWithYUYVAndMJPEGIsUsable() {
        let webcam = Self.camera(driver: "uvcvideo", capabilities: [.videoCapture, .streaming],
                                 formats: [Self.format("YUYV"), Self.format("MJPG")])
        #expect(webcam.isUsableCamera)
        #expect(!webcam.isRawCSISensor)
    }

    @Test func theRaspberryPiReceiverDriversAreRawCSIWhateverTheyList() {
        for driver in ["unicam", "rp1-cfe"] {
            let sensor = Self.camera(driver: driver, capabilities: [.videoCapture, .streaming],
                                     formats: [Self.format("YUYV")])
            #expect(sensor.isRawCSISensor, "\(driver)")
            #expect(!sensor.isUsableCamera, "\(driver)")
        }
    }

    @Test func aNodeOfferingOnlyBayerIsARawSensorEvenWithEmulatedFormats() {
        let sensor = Self.camera(driver: "some-csi", capabilities: [.videoCapture, .streaming],
                                 formats: [Self.format("pRAA", name: "10-bit Bayer RGRG/GBGB Packed"), Self.format("RGB3", emulated: true)])
        #expect(sensor.isRawCSISensor)
        #expect(!sensor.isUsableCamera)
    }

    @Test func codecsAndMetadataNodesAreNotCameras() {
        let codec = Self.camera(driver: "bcm2835-codec", capabilities: [.memoryToMemory, .streaming], formats: [])
        let metadata = Self.camera(driver: "uvcvideo", capabilities: [.metadataCapture, .streaming], formats: [])
        #expect(!codec.isVideoCaptureDevice && !codec.isUsableCamera)
        #expect(!metadata.isVideoCaptureDevice && !metadata.isUsableCamera)
    }

    @Test func capabilityNamesReadAsWords() {
        #expect(CameraCapabilities([.videoCapture, .streaming]).names == ["video-capture", "streaming"])
    }

    @Test func frameIntervalsPrintAsFramesPerSecond() {
        #expect(FrameInterval(numerator: 1, denominator: 30).description == "30")
        #expect(FrameInterval(numerator: 1001, denominator: 30000).description == "29.97")
        #expect(FrameInterval(numerator: 2, denominator: 15).description == "7.50")
    }

    @Test func listingVideoNodesOnAMachineWithoutCamerasIsEmptyNotAnError() {
        #expect(CameraEnumeration.videoNodePaths(directory: "/nonexistent").isEmpty)
    }
}
