import Testing
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
}
