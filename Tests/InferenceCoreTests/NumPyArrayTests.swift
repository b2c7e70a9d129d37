import Testing
import Glibc
import Foundation
import InferenceCore

@Suite struct NumPyArrayTests {
    @Test(arguments: [TensorElementType.float32, .int8, .uint8, .int32, .int64])
    func arraysSurviveAnEncodeParseRoundTrip(_ type: TensorElementType) throws {
        let shape = [2, 3, 1]
        let bytes = (0..<(6 * (type.byteSize ?? 1))).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let array = NumPyArray(elementType: type, shape: shape, bytes: bytes)
        let encoded = array.encoded()
        #expect(encoded.count % 64 == bytes.count % 64)  // header padded to a multiple of 64
        #expect(try NumPyArray(parsing: encoded) == array)
    }

    @Test func scalarsAndOneDimensionalShapesUseNumPysTupleSyntax() throws {
        let scalar = NumPyArray(elementType: .float32, shape: [], bytes: [0, 0, 128, 63])
        #expect(String(decoding: scalar.encoded()[10..<70], as: UTF8.self).contains("'shape': ()"))
        #expect(try NumPyArray(parsing: scalar.encoded()).shape == [])
        let vector = NumPyArray(elementType: .int8, shape: [3], bytes: [1, 2, 3])
        #expect(String(decoding: vector.encoded()[10..<70], as: UTF8.self).contains("'shape': (3,)"))
    }

    @Test func malformedFilesAreRejectedWithAMessage() {
        let good = NumPyArray(elementType: .float32, shape: [4], bytes: [UInt8](repeating: 1, count: 16)).encoded()
        for length in 0..<good.count {
            #expect(throws: NumPyArray.FormatError.self) { _ = try NumPyArray(parsing: Array(good[0..<length])) }
        }
        var bigEndian = good
        if let position = bigEndian.firstIndex(of: UInt8(ascii: "<")) { bigEndian[position] = UInt8(ascii: ">") }
        #expect(throws: NumPyArray.FormatError.self) { _ = try NumPyArray(parsing: bigEndian) }
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"
        let forged = [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(header.utf8.count), 0] + Array(header.utf8)
        #expect(throws: NumPyArray.FormatError.self) { _ = try NumPyArray(parsing: forged) }
    }

    @Test func version2HeadersAreRead() throws {
        let header = "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }\n"
        let file = [0x93] + Array("NUMPY".utf8) + [2, 0, UInt8(header.utf8.count), 0, 0, 0] + Array(header.utf8) + [5, 251]
        let array = try NumPyArray(parsing: file)
        #expect(array.elementType == .int8 && array.shape == [2] && array.bytes == [5, 251])
    }

    /// A version 1.0 file with this header text and these data bytes.
    static func file(header: String, data: [UInt8] = [UInt8](repeating: 0, count: 8)) -> [UInt8] {
        let bytes = Array(header.utf8)
        return [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(bytes.count & 0xFF), UInt8(bytes.count >> 8)] + bytes + data
    }

    static func message(parsing file: [UInt8]) -> String? {
        do {
            _ = try NumPyArray(parsing: file)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("Headers written the ways NumPy and Python 2 NumPy write them are read")
    func wellFormedHeadersAreRead() throws {
        let headers = [
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }          \n",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n",
            "{\"descr\": \"<f4\", \"shape\": (1, 2), \"fortran_order\": False}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }\n",
            "{ 'descr' : '<f4' ,\t'fortran_order' : False , 'shape' : ( 1 , 2 , ) , }\n",
        ]
        for header in headers {
            let array = try NumPyArray(parsing: Self.file(header: header))
            #expect(array.elementType == .float32 && array.elementCount == 2, "\(header)")
        }
    }

    @Test("A header that is not a complete, valid dict literal is refused, saying what is wrong", arguments: [
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", "no closing '}'"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "no closing '}'"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)\n", "no closing '}'"),
        ("'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "does not start with '{'"),
        ("{'descr': '<f4', 'fortran_order': 'yes', 'shape': (2,), }", "'fortran_order' must be True or False"),
        ("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", "'fortran_order' must be True or False"),
        ("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,), }", "'fortran_order' must be True or False"),
        ("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "Fortran (column-major) order"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", "'shape' must be a tuple"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "'shape' must be a tuple"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", "'shape' must be a tuple"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unexpected key 'extra'"),
        ("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "'descr' twice"),
        ("{'descr': '<f4', 'shape': (2,)}", "no 'fortran_order'"),
        ("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,)}", "structured dtypes"),
        ("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", "',' or '}' expected"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", "text after its closing '}'"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999,)}", "dimension above 2147483648"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536)}", "more than 2147483648 elements"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3000000000)}", "dimension above 2147483648"),
    ] as [(String, String)])
    func malformedHeadersAreRefused(header: String, expected: String) {
        let message = Self.message(parsing: Self.file(header: header))
        #expect(message?.contains(expected) == true, "\(header) → \(message ?? "accepted")")
    }

    @Test("The data must be exactly as long as the shape says")
    func dataLengthMustMatch() {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n"
        #expect(Self.message(parsing: Self.file(header: header, data: [UInt8](repeating: 0, count: 8))) == nil)
        #expect(Self.message(parsing: Self.file(header: header, data: [UInt8](repeating: 0, count: 7)))?.contains("shorter") == true)
        #expect(Self.message(parsing: Self.file(header: header, data: [UInt8](repeating: 0, count: 9)))?.contains("longer") == true)
    }

    @Test("A file's errors name its path once")
    func readErrorsNameThePathOnce() throws {
        let path = "/tmp/posewatch-npy-test-\(getpid()).npy"
        defer { unlink(path) }
        let file = fopen(path, "wb")!
        let bytes = Self.file(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)")
        fwrite(bytes, 1, bytes.count, file)
        fclose(file)
        for target in [path, path + ".missing"] {
            do {
                _ = try NumPyArray.read(contentsOf: target)
                Issue.record("\(target) was read")
            } catch {
                #expect(error.message.hasPrefix(target + ": "), "\(error.message)")
                #expect(error.message.components(separatedBy: "posewatch-npy-test").count == 2, "\(error.message)")
            }
        }
    }
}
