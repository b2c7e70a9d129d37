#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import LinuxSystem

/// A NumPy `.npy` array (format versions 1.0, 2.0 and 3.0): dtype, shape, little-endian C-order bytes.
///
/// The parser checks everything (magic, header length, dictionary syntax, dtype, shape overflow,
/// data length) and never traps on malformed input, so it is safe on files from anywhere.
public struct NumPyArray: Sendable, Equatable {
    /// The element type (`<f4` → float32, `|i1` → int8, ...).
    public var elementType: TensorElementType
    /// Dimensions, outermost first; `[]` is a scalar.
    public var shape: [Int]
    /// The elements, little-endian, C order.
    public var bytes: [UInt8]

    /// An array from parts; `bytes.count` must equal `shape.product × elementType.byteSize`.
    public init(elementType: TensorElementType, shape: [Int], bytes: [UInt8]) {
        self.elementType = elementType
        self.shape = shape
        self.bytes = bytes
    }

    /// The number of elements.
    public var elementCount: Int { shape.reduce(1, *) }

    /// Why a `.npy` file could not be read or written.
    public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    static let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]  // "\x93NUMPY"

    /// NumPy dtype descriptors this reader understands, and their element types.
    static let descriptors: [(String, TensorElementType)] = [
        ("<f4", .float32), ("<f8", .float64), ("<f2", .float16), ("<i4", .int32), ("<i8", .int64), ("<i2", .int16),
        ("|i1", .int8), ("<i1", .int8), ("|u1", .uint8), ("<u1", .uint8), ("|b1", .bool), ("<u2", .uint16),
        ("<u4", .uint32), ("<u8", .uint64),
    ]

    /// Parses the bytes of a `.npy` file.
    public init(parsing data: [UInt8]) throws(FormatError) {
        guard data.count >= 10, Array(data[0..<6]) == Self.magic else {
            throw FormatError("not a NumPy .npy file (bad magic)")
        }
        let major = data[6]
        let headerLength: Int
        let headerStart: Int
        switch major {
        case 1:
            headerLength = Int(data[8]) | Int(data[9]) << 8
            headerStart = 10
        case 2, 3:
            guard data.count >= 12 else { throw FormatError("truncated .npy header") }
            headerLength = Int(data[8]) | Int(data[9]) << 8 | Int(data[10]) << 16 | Int(data[11]) << 24
            headerStart = 12
        default:
            throw FormatError(".npy format version \(major) is not supported")
        }
        guard headerLength <= data.count - headerStart else {
            throw FormatError(".npy header of \(headerLength) bytes runs past the end of the file")
        }
        let header = String(decoding: data[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        guard let descr = Self.value(of: "descr", in: header) else { throw FormatError(".npy header has no 'descr'") }
        let descriptor = descr.trimmingQuotes()
        guard let type = Self.descriptors.first(where: { $0.0 == descriptor })?.1 else {
            throw FormatError(".npy dtype \(descr) is not supported (little-endian numbers and bool only)")
        }
        guard let fortran = Self.value(of: "fortran_order", in: header) else {
            throw FormatError(".npy header has no 'fortran_order'")
        }
        guard let shapeText = Self.value(of: "shape", in: header) else { throw FormatError(".npy header has no 'shape'") }
        var dimensions: [Int] = []
        let inner = shapeText.drop { $0 == "(" }.prefix { $0 != ")" }
        for part in inner.split(separator: ",") {
            let trimmed = part.filter { $0 != " " && $0 != "L" }
            if trimmed.isEmpty { continue }
            guard let value = Int(trimmed), value >= 0 else { throw FormatError(".npy shape \(shapeText) is invalid") }
            dimensions.append(value)
        }
        guard dimensions.count <= 32 else { throw FormatError(".npy shape has too many dimensions") }
        if fortran.hasPrefix("True") && dimensions.filter({ $0 > 1 }).count > 1 {
            throw FormatError(".npy arrays in Fortran order are not supported")
        }
        var count = 1
        for dimension in dimensions {
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow else { throw FormatError(".npy shape \(dimensions) is too large") }
            count = product
        }
        let size = type.byteSize ?? 1
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: size)
        let dataStart = headerStart + headerLength
        guard !overflow, byteCount <= data.count - dataStart else {
            throw FormatError(".npy data is shorter than shape \(dimensions) of \(type) needs")
        }
        elementType = type
        shape = dimensions
        bytes = Array(data[dataStart..<(dataStart + byteCount)])
    }

    /// The text after `'key':` up to the next top-level comma or closing brace.
    static func value(of key: String, in header: String) -> String? {
        let characters = Array(header)
        let needle = Array("'\(key)'")
        guard characters.count >= needle.count,
            let start = (0...(characters.count - needle.count)).first(where: { Array(characters[$0..<($0 + needle.count)]) == needle })
        else { return nil }
        var position = start + needle.count
        while position < characters.count, characters[position] == " " { position += 1 }
        guard position < characters.count, characters[position] == ":" else { return nil }
        position += 1
        var depth = 0
        var result = ""
        while position < characters.count {
            let character = characters[position]
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if depth <= 0 && (character == "," || character == "}") { break }
            result.append(character)
            position += 1
        }
        return result.trimmingCharacters()
    }

    /// The file's bytes: format 1.0 (2.0 when the header would not fit), header padded to 64 bytes.
    public func encoded() -> [UInt8] {
        let descriptor = Self.descriptors.first(where: { $0.1 == elementType })?.0 ?? "|u1"
        let shapeText = shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
        var header = "{'descr': '\(descriptor)', 'fortran_order': False, 'shape': \(shapeText), }"
        var version: UInt8 = 1
        var prefixLength = 10
        if header.utf8.count + 11 > 65535 {
            version = 2
            prefixLength = 12
        }
        let total = prefixLength + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - total % 64) % 64) + "\n"
        let length = header.utf8.count
        var result = Self.magic + [version, 0]
        if version == 1 {
            result += [UInt8(length & 0xFF), UInt8(length >> 8)]
        } else {
            result += [UInt8(length & 0xFF), UInt8((length >> 8) & 0xFF), UInt8((length >> 16) & 0xFF), UInt8(length >> 24)]
        }
        result += Array(header.utf8)
        result += bytes
        return result
    }

    /// Reads and parses the `.npy` file at `path`.
    public static func read(contentsOf path: String) throws(FormatError) -> NumPyArray {
        let data: [UInt8]
        do {
            let file = try MemoryMappedFile(path: path)
            data = Array(file.bytes)
        } catch {
            throw FormatError("cannot read \(path): \(error.reason)")
        }
        do {
            return try NumPyArray(parsing: data)
        } catch {
            throw FormatError("\(path): \(error.message)")
        }
    }

    /// Writes the array to `path` (created or truncated, mode 0644).
    public func write(to path: String) throws(FormatError) {
        let data = encoded()
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FormatError("cannot write \(path): \(Errno.current)") }
        defer { _ = Glibc.close(descriptor) }
        var written = 0
        while written < data.count {
            let result = data.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw FormatError("cannot write \(path): \(Errno.current)")
            }
            written += result
        }
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    func trimmingQuotes() -> String {
        String(filter { $0 != "'" && $0 != "\"" }).trimmingCharacters()
    }
}
