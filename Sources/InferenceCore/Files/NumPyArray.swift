#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import LinuxSystem

/// What a `.npy` file's header says (format versions 1.0, 2.0 and 3.0): the element type, the
/// shape and where the data starts. Read from the file's first bytes only, so a reader can check a
/// file against its header (`checkDataLength`) and then read the data through a window of its
/// own size instead of copying the whole file (the keypoint reader, `replay`).
public struct NumPyHeader: Sendable, Equatable {
    /// The element type (`<f4` → float32, `|i1` → int8, ...).
    public var elementType: TensorElementType
    /// Dimensions, outermost first; `[]` is a scalar.
    public var shape: [Int]
    /// The number of elements (at most `NumPyArray.maximumElementCount`).
    public var elementCount: Int
    /// The file offset of the first element.
    public var dataOffset: Int
    /// The bytes the elements take.
    public var dataByteCount: Int

    /// The most header text a file may have: NumPy writes about 128 bytes, and version 2.0
    /// only past 65,535; this bounds what a reader holds before it knows the shape.
    public static let maximumHeaderLength = 1 << 20

    /// How many of the file's first bytes hold the whole header (what `init(parsing:)` needs),
    /// from at least its first 12 bytes (fewer when the file is shorter).
    public static func prefixLength(_ prefix: some Collection<UInt8>) throws(NumPyArray.FormatError) -> Int {
        let bytes = Array(prefix.prefix(12))
        guard bytes.count >= 10, Array(bytes[0..<6]) == NumPyArray.magic else {
            throw NumPyArray.FormatError("not a NumPy .npy file (bad magic)")
        }
        switch bytes[6] {
        case 1:
            return 10 + (Int(bytes[8]) | Int(bytes[9]) << 8)
        case 2, 3:
            guard bytes.count >= 12 else { throw NumPyArray.FormatError("truncated .npy header") }
            let length = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
            guard length <= maximumHeaderLength else {
                throw NumPyArray.FormatError(".npy header of \(length) bytes is longer than the \(maximumHeaderLength) posewatch reads")
            }
            return 12 + length
        default:
            throw NumPyArray.FormatError(".npy format version \(bytes[6]) is not supported")
        }
    }

    /// Parses the header at the start of `data`, the file's first bytes: at least
    /// `prefixLength` of them; what follows the header is not looked at.
    public init(parsing data: [UInt8]) throws(NumPyArray.FormatError) {
        let headerEnd = try Self.prefixLength(data)
        let headerStart = data[6] == 1 ? 10 : 12
        guard headerEnd <= data.count else {
            throw NumPyArray.FormatError(".npy header of \(headerEnd - headerStart) bytes runs past the end of the file")
        }
        let header = try NumPyArray.Header(parsing: data[headerStart..<headerEnd])
        guard let type = NumPyArray.descriptors.first(where: { $0.0 == header.descriptor })?.1 else {
            throw NumPyArray.FormatError(".npy dtype '\(header.descriptor)' is not supported (little-endian numbers and bool only)")
        }
        guard !header.isFortranOrder else {
            throw NumPyArray.FormatError(".npy array is in Fortran (column-major) order, which is not supported: save np.ascontiguousarray(array) instead")
        }
        var count = 1
        for dimension in header.shape {
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow, product <= NumPyArray.maximumElementCount else {
                throw NumPyArray.FormatError(".npy shape \(header.shape) has more than \(NumPyArray.maximumElementCount) elements")
            }
            count = product
        }
        elementType = type
        shape = header.shape
        elementCount = count
        dataOffset = headerEnd
        dataByteCount = count * (type.byteSize ?? 1)  // at most 2³¹ × 8: no overflow
    }

    /// Checks that a file of `fileSize` bytes holds exactly the data the header declares: a
    /// file cut short, or a header claiming more than the file holds, is refused here, before
    /// any of the data is read.
    public func checkDataLength(fileSize: Int) throws(NumPyArray.FormatError) {
        let available = fileSize - dataOffset
        guard dataByteCount == available else {
            throw NumPyArray.FormatError(available < dataByteCount
                ? ".npy data is \(available) bytes, shorter than the \(dataByteCount) that shape \(shape) of \(elementType) needs"
                : ".npy data is \(available) bytes, longer than the \(dataByteCount) that shape \(shape) of \(elementType) holds")
        }
    }
}

/// A NumPy `.npy` array (format versions 1.0, 2.0 and 3.0): dtype, shape, little-endian C-order bytes.
///
/// The parser checks everything (magic, header length, the header as a complete Python dict
/// literal, dtype, C order, shape bounds, exact data length) and never traps on malformed input,
/// so it is safe on files from anywhere.
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
        let header = try NumPyHeader(parsing: data)
        try header.checkDataLength(fileSize: data.count)
        elementType = header.elementType
        shape = header.shape
        bytes = Array(data[header.dataOffset..<(header.dataOffset + header.dataByteCount)])
    }

    /// The most elements an array may have: 2³¹ (8 GiB of float32, more memory than a Raspberry Pi
    /// has; TFLite tensors count elements in 32 bits). Also the limit for any one dimension, so a
    /// zero elsewhere in the shape cannot smuggle in an absurd number.
    public static let maximumElementCount = 1 << 31

    /// The most dimensions (NumPy 1.x's limit is 32).
    public static let maximumDimensionCount = 32

    /// The header: the Python dict literal NumPy writes, `{'descr': '<f4', 'fortran_order': False,
    /// 'shape': (2, 3), }`, followed by spaces and a newline. Read strictly, as NumPy's own reader
    /// does: exactly these three keys, each once; `descr` a string, `fortran_order` the literal
    /// True or False, `shape` a tuple of non-negative integers; the closing brace present and only
    /// whitespace after it.
    struct Header {
        var descriptor: String
        var isFortranOrder: Bool
        var shape: [Int]

        init(parsing text: ArraySlice<UInt8>) throws(FormatError) {
            var reader = HeaderReader(bytes: text)
            var descriptor: String?, fortranOrder: Bool?, shape: [Int]?
            try reader.expect(UInt8(ascii: "{"), "does not start with '{'")
            let unfinished = FormatError(".npy header is not a complete dictionary: it has no closing '}'")
            while true {
                reader.skipWhitespace()
                if reader.take(UInt8(ascii: "}")) { break }
                guard !reader.isAtEnd else { throw unfinished }
                let key = try reader.string(what: "a key")
                reader.skipWhitespace()
                try reader.expect(UInt8(ascii: ":"), "has no ':' after '\(key)'")
                reader.skipWhitespace()
                switch key {
                case "descr":
                    guard descriptor == nil else { throw FormatError(".npy header has 'descr' twice") }
                    guard reader.peek == UInt8(ascii: "'") || reader.peek == UInt8(ascii: "\"") else {
                        throw FormatError(".npy header: 'descr' is not a dtype string (structured dtypes are not supported)")
                    }
                    descriptor = try reader.string(what: "'descr'")
                case "fortran_order":
                    guard fortranOrder == nil else { throw FormatError(".npy header has 'fortran_order' twice") }
                    fortranOrder = try reader.boolean(what: "'fortran_order'")
                case "shape":
                    guard shape == nil else { throw FormatError(".npy header has 'shape' twice") }
                    shape = try reader.shape()
                default:
                    throw FormatError(".npy header has an unexpected key '\(key)' (only 'descr', 'fortran_order' and 'shape')")
                }
                reader.skipWhitespace()
                if reader.take(UInt8(ascii: ",")) { continue }
                guard !reader.isAtEnd else { throw unfinished }
                try reader.expect(UInt8(ascii: "}"), "is not a complete dictionary: ',' or '}' expected after '\(key)'")
                break
            }
            reader.skipWhitespace()
            guard reader.isAtEnd else { throw FormatError(".npy header has text after its closing '}'") }
            guard let descriptor else { throw FormatError(".npy header has no 'descr'") }
            guard let fortranOrder else { throw FormatError(".npy header has no 'fortran_order'") }
            guard let shape else { throw FormatError(".npy header has no 'shape'") }
            self.descriptor = descriptor
            self.isFortranOrder = fortranOrder
            self.shape = shape
        }
    }

    /// Reads the tokens of a header's Python literals from its bytes.
    struct HeaderReader {
        let bytes: ArraySlice<UInt8>
        var position: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var isAtEnd: Bool { position >= bytes.endIndex }
        var peek: UInt8? { isAtEnd ? nil : bytes[position] }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        }

        /// Consumes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        mutating func expect(_ byte: UInt8, _ problem: String) throws(FormatError) {
            guard take(byte) else { throw FormatError(".npy header \(problem)") }
        }

        /// A quoted string without escapes (NumPy's keys and dtype strings need none).
        mutating func string(what: String) throws(FormatError) -> String {
            guard let quote = peek, quote == UInt8(ascii: "'") || quote == UInt8(ascii: "\"") else {
                throw FormatError(".npy header: \(what) is not a quoted string")
            }
            position += 1
            let start = position
            while let byte = peek, byte != quote {
                // Escapes, line breaks and non-ASCII never occur in a dtype or key NumPy writes.
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else {
                    throw FormatError(".npy header: \(what) contains a character NumPy does not write there")
                }
                position += 1
            }
            guard take(quote) else { throw FormatError(".npy header: \(what) has no closing quote") }
            return String(decoding: bytes[start..<(position - 1)], as: UTF8.self)
        }

        /// `True` or `False`, exactly (Python's literals; not 'yes', 1 or true).
        mutating func boolean(what: String) throws(FormatError) -> Bool {
            for (word, value) in [("True", true), ("False", false)] where bytes[position...].starts(with: word.utf8) {
                let end = position + word.utf8.count
                // "Falsey" is a different name, not False followed by something.
                if end < bytes.endIndex, Self.isNameCharacter(bytes[end]) { break }
                position = end
                return value
            }
            throw FormatError(".npy header: \(what) must be True or False")
        }

        /// `()`, `(3,)`, `(2, 3)` or `(2, 3,)`: a tuple of non-negative integers, each at most
        /// `maximumElementCount`, at most `maximumDimensionCount` of them. Python 2's `3L` is read too.
        mutating func shape() throws(FormatError) -> [Int] {
            let problem = FormatError(".npy header: 'shape' must be a tuple of non-negative integers like (3,) or (2, 3)")
            guard take(UInt8(ascii: "(")) else { throw problem }
            var dimensions: [Int] = []
            var closedAfterComma = false
            skipWhitespace()
            if take(UInt8(ascii: ")")) { return [] }
            while true {
                skipWhitespace()
                let start = position
                while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
                guard position > start else { throw problem }
                // More than 10 digits exceeds maximumElementCount whatever they are: no Int overflow.
                guard position - start <= 10, let value = Int(String(decoding: bytes[start..<position], as: UTF8.self)),
                      value <= NumPyArray.maximumElementCount else {
                    throw FormatError(".npy shape has a dimension above \(NumPyArray.maximumElementCount)")
                }
                _ = take(UInt8(ascii: "L"))
                dimensions.append(value)
                guard dimensions.count <= NumPyArray.maximumDimensionCount else {
                    throw FormatError(".npy shape has more than \(NumPyArray.maximumDimensionCount) dimensions")
                }
                skipWhitespace()
                if take(UInt8(ascii: ",")) {
                    skipWhitespace()
                    if take(UInt8(ascii: ")")) { closedAfterComma = true; break }
                    continue
                }
                guard take(UInt8(ascii: ")")) else { throw problem }
                break
            }
            // In Python `(3)` is the number 3, not a tuple: NumPy refuses it, and so does this.
            guard dimensions.count > 1 || closedAfterComma else { throw problem }
            return dimensions
        }

        static func isNameCharacter(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
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

    /// Reads and parses the `.npy` file at `path`; a `FormatError` names the path once, first.
    public static func read(contentsOf path: String) throws(FormatError) -> NumPyArray {
        let data: [UInt8]
        do {
            let file = try MemoryMappedFile(path: path)
            data = Array(file.bytes)
        } catch {
            throw FormatError("\(MessageExcerpt.path(path)): cannot read: \(error.reason)")
        }
        do {
            return try NumPyArray(parsing: data)
        } catch {
            // The one place the path is added: callers print the message as it is.
            throw FormatError("\(MessageExcerpt.path(path)): \(error.message)")
        }
    }

    /// Writes the array to `path` (created or truncated, mode 0644).
    public func write(to path: String) throws(FormatError) {
        let data = encoded()
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FormatError("cannot write \(MessageExcerpt.path(path)): \(Errno.current)") }
        defer { _ = Glibc.close(descriptor) }
        var written = 0
        while written < data.count {
            let result = data.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw FormatError("cannot write \(MessageExcerpt.path(path)): \(Errno.current)")
            }
            written += result
        }
    }
}
