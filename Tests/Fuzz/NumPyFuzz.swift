// libFuzzer target over the .npy parser (`NumPyArray(parsing:)`): any bytes give an array or a
// FormatError; a parsed array holds exactly the bytes its shape and dtype need (what
// KeypointFile and `model run` rely on), and re-encodes and re-parses to itself. Built by build.sh as
// fuzz-numpy; run like fuzz-loader with Tests/Fuzz/seeds-npy as the seed corpus.
import InferenceCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNumPy(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let array = try? NumPyArray(parsing: Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    if array.bytes.count != array.elementCount * (array.elementType.byteSize ?? 1) {
        fatalError("an accepted .npy array's data does not match its shape")
    }
    guard let again = try? NumPyArray(parsing: array.encoded()), again == array else {
        fatalError("an accepted .npy array did not survive encode → parse")
    }
    return 0
}
