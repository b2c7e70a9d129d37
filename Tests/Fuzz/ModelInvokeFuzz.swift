// libFuzzer target: a real model (MoveNet by default) with a few bytes changed, loaded, prepared
// and run the way the appliance runs it. Every input must end in a clean ModelError (at load,
// prepare or invoke) or a finished invoke — never a trap, a hang or an out-of-bounds access.
//
// The fuzz input is not a model but a list of edits to one, so each run stays small and the fuzzer
// spends its time where structural checks cannot help: the values of constants (divisors, gather
// indices, shapes held in tensors, axes, quantization parameters). Each edit is 4 bytes:
//   byte 0: where — even: into the small constant tensors (≤ 64 bytes: shapes, axes, divisors,
//           indices), odd: anywhere in the file;
//   bytes 1–2: position (little-endian, taken modulo the region's size);
//   byte 3: the new byte.
// The model is read once from $POSEWATCH_FUZZ_MODEL (default: MoveNet in ../shared/models).
//
// Built by build.sh as fuzz-model-invoke; seeds in Tests/Fuzz/seeds-model-invoke.
import Glibc
import LinuxSystem
@testable import InferenceCore

nonisolated(unsafe) var pristine: [UInt8] = []
/// File offsets of the bytes of every constant tensor of at most 64 bytes.
nonisolated(unsafe) var smallConstantOffsets: [Int] = []

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let path = getenv("POSEWATCH_FUZZ_MODEL").map { String(cString: $0) } ?? "../shared/models/movenet_singlepose_lightning_int8_4.tflite"
    guard let file = try? MemoryMappedFile(path: path) else {
        print("fuzz-model-invoke: cannot read \(path); set POSEWATCH_FUZZ_MODEL to a .tflite file")
        exit(2)
    }
    pristine = Array(file.bytes)
    guard let model = try? Model(bytes: pristine) else {
        print("fuzz-model-invoke: \(path) does not load unchanged")
        exit(2)
    }
    for case let range? in model.constantRanges where range.count <= 64 { smallConstantOffsets += Array(range) }
    print("fuzz-model-invoke: \(path), \(pristine.count) bytes, \(smallConstantOffsets.count) bytes in small constants")
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModelInvoke(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var bytes = pristine
    var edit = 0
    while edit + 4 <= size {
        let position = Int(data[edit + 1]) | Int(data[edit + 2]) << 8
        let offset = data[edit] & 1 == 0 && !smallConstantOffsets.isEmpty
            ? smallConstantOffsets[position % smallConstantOffsets.count]
            : (position * 131 + Int(data[edit]) * 65_537) % bytes.count
        bytes[offset] = data[edit + 3]
        edit += 4
    }
    guard let model = try? Model(bytes: bytes),
          let interpreter = try? Interpreter(model: model, registry: KernelRegistry(threadCount: 1)) else { return 0 }
    // A frame-like input: a ramp, so argmax-style decoders see a definite peak.
    for index in 0..<interpreter.inputCount {
        let input = interpreter.inputBytes(index)
        for i in 0..<input.count { input[i] = UInt8(truncatingIfNeeded: i &* 7 &+ i >> 9) }
    }
    _ = try? interpreter.invoke()
    return 0
}
