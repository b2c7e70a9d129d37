// libFuzzer target: a real model (MoveNet by default) with bits flipped anywhere in the file, loaded
// (parse and validation) and, for one input in eight, prepared (every node's Prepare and the arena
// plan). Every input must end in a loaded model or a `ModelError` that says why — never a trap, a
// hang or an out-of-bounds access. This is the long, release-built form of swift test's
// `randomBitFlipsInMoveNetLoadOrFailWithAMessage` (400 flips in a debug build); model-invoke also
// invokes, but a whole MoveNet run per input gets through far fewer files in the same time.
//
// The fuzz input is a list of flips, 4 bytes each: bytes 0–2 the position (little-endian, taken
// modulo the file size), byte 3 the bit (its low 3 bits). Byte 3 of the first flip & 0x38 == 0
// also prepares. The model is read once from $POSEWATCH_FUZZ_MODEL (default: MoveNet in
// ../shared/models).
//
// Built by build.sh as fuzz-model-bit-flips; seeds in Tests/Fuzz/seeds-model-bit-flips.
import Glibc
import LinuxSystem
import InferenceCore

nonisolated(unsafe) var pristine: [UInt8] = []

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let path = getenv("POSEWATCH_FUZZ_MODEL").map { String(cString: $0) } ?? "../shared/models/movenet_singlepose_lightning_int8_4.tflite"
    guard let file = try? MemoryMappedFile(path: path) else {
        print("fuzz-model-bit-flips: cannot read \(path); set POSEWATCH_FUZZ_MODEL to a .tflite file")
        exit(2)
    }
    pristine = Array(file.bytes)
    guard (try? Model(bytes: pristine)) != nil else {
        print("fuzz-model-bit-flips: \(path) does not load unchanged")
        exit(2)
    }
    print("fuzz-model-bit-flips: \(path), \(pristine.count) bytes")
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModelBitFlips(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 4 else { return 0 }
    var bytes = pristine
    var flip = 0
    while flip + 4 <= size {
        let position = (Int(data[flip]) | Int(data[flip + 1]) << 8 | Int(data[flip + 2]) << 16) % bytes.count
        bytes[position] ^= UInt8(1) << (data[flip + 3] & 7)
        flip += 4
    }
    do throws(ModelError) {
        let model = try Model(bytes: bytes)
        if data[3] & 0x38 == 0 { _ = try Interpreter(model: model, registry: KernelRegistry(threadCount: 1)) }
    } catch {
        // A rejection must say why: the owner sees this line from `posewatch doctor`.
        if error.message.isEmpty { fatalError("a damaged model was rejected without a message") }
    }
    return 0
}
