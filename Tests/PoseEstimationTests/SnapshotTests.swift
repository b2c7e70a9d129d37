import Testing
import Glibc
@testable import PoseEstimation

@Suite struct SnapshotTests {
    /// Runs a command and returns its standard output bytes and exit status.
    static func run(_ command: String) -> (output: [UInt8], status: Int32) {
        guard let pipe = popen(command, "r") else { return ([], -1) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count == 0 { break }
            output += buffer[0..<count]
        }
        let status = pclose(pipe)
        return (output, status)
    }

    static func hasTool(_ name: String) -> Bool { run("command -v \(name) >/dev/null 2>&1 && echo yes").output == Array("yes\n".utf8) }

    func renderedSnapshot() -> (image: RGBImage, png: [UInt8]) {
        var image = RGBImage(width: 320, height: 240)
        let pose = standingPose(centerX: 160, centerY: 140, scale: 0.5)
        WireframeRenderer().draw(pose, region: CropRegion(minX: 40, minY: 20, side: 200), on: &image)
        return (image, PNGEncoder.encode(image))
    }

    @Test func bonesAreDrawnBetweenTheirJointsAndNowhereElse() {
        let image = renderedSnapshot().image
        let pose = standingPose(centerX: 160, centerY: 140, scale: 0.5)
        // Midpoint of the left thigh (hip → knee) carries the bone's colour (green for score 0.9).
        let hip = pose[.leftHip], knee = pose[.leftKnee]
        let middle = image.pixel(x: Int((hip.x + knee.x) / 2), y: Int((hip.y + knee.y) / 2))
        #expect(middle.g > 200 && middle.r < 50)
        // Far from the skeleton and the crop region: untouched black.
        #expect(image.pixel(x: 300, y: 230) == (0, 0, 0))
        // The crop region's top edge is yellow.
        let edge = image.pixel(x: 140, y: 20)
        #expect(edge.r == 255 && edge.g == 220 && edge.b == 0)
    }

    @Test(.enabled(if: SnapshotTests.hasTool("pngtopnm"),
                   "needs pngtopnm (Debian package netpbm) as a standard PNG decoder"))
    func theSnapshotDecodesWithAStandardPNGDecoderToTheSamePixels() throws {
        let (image, png) = renderedSnapshot()
        let path = "/tmp/posewatch-snapshot-test-\(getpid()).png"
        let file = try #require(fopen(path, "wb"))
        _ = png.withUnsafeBytes { fwrite($0.baseAddress, 1, png.count, file) }
        fclose(file)
        defer { unlink(path) }
        let decoded = Self.run("pngtopnm \(path) 2>/dev/null")
        #expect(decoded.status == 0)
        // Binary PPM: "P6\n320 240\n255\n" then RGB bytes.
        let header = Array("P6\n320 240\n255\n".utf8)
        #expect(Array(decoded.output.prefix(header.count)) == header)
        #expect(Array(decoded.output.dropFirst(header.count)) == image.pixels)
    }

    @Test func largeImagesSpanSeveralStoredDeflateBlocks() {
        let image = RGBImage(width: 200, height: 200, pixels: (0..<120_000).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let png = PNGEncoder.encode(image)
        // 200 rows × 601 bytes = 120,200 raw bytes: two stored blocks, so the file is a little larger.
        #expect(png.count > 120_200 && png.count < 120_400)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    @Test func checksumsMatchTheirStandardVectors() {
        #expect(PNGEncoder.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(PNGEncoder.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
    }
}
