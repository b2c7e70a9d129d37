/// Encodes RGB images as PNG (8-bit truecolour, no interlace) with uncompressed ("stored") deflate
/// blocks: every PNG decoder reads them, and the encoder stays a few dozen lines with no zlib.
/// Snapshots are taken by hand to aim a camera, so size does not matter.
public enum PNGEncoder {
    /// The PNG file bytes for `image`.
    public static func encode(_ image: RGBImage) -> [UInt8] {
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        appendBigEndian(UInt32(image.width), to: &header)
        appendBigEndian(UInt32(image.height), to: &header)
        header += [8, 2, 0, 0, 0]  // bit depth 8, colour type 2 (RGB), deflate, filter set 0, no interlace
        appendChunk("IHDR", header, to: &file)

        // Raw scanlines, each preceded by filter type 0 (none).
        let rowBytes = image.width * 3
        var raw: [UInt8] = []
        raw.reserveCapacity((rowBytes + 1) * image.height)
        for row in 0..<image.height {
            raw.append(0)
            raw += image.pixels[(row * rowBytes)..<((row + 1) * rowBytes)]
        }
        var zlib: [UInt8] = [0x78, 0x01]  // deflate, 32 KiB window, no preset dictionary, check bits valid
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            let isLast = offset + count == raw.count
            zlib.append(isLast ? 1 : 0)  // BFINAL, BTYPE 00 (stored)
            zlib += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[offset..<(offset + count)]
            offset += count
        } while offset < raw.count
        appendBigEndian(adler32(raw), to: &zlib)
        appendChunk("IDAT", zlib, to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        appendBigEndian(UInt32(data.count), to: &file)
        let typed = Array(type.utf8) + data
        file += typed
        appendBigEndian(crc32(typed), to: &file)
    }

    static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 (ISO-HDLC, reflected 0xEDB88320), as PNG chunks use.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// Adler-32, zlib's checksum of the uncompressed data.
    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}
