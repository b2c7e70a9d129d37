// libFuzzer target over the TFLite loader, Prepare and (for small graphs) Eval: any byte string must give a clean
// `ModelError` or a valid model and interpreter, never a trap or an out-of-bounds access.
//
// Build and run (outside SwiftPM; see build.sh, which compiles LinuxSystem and InferenceCore from
// Sources/ with -sanitize=fuzzer,address):
//
//     Tests/Fuzz/build.sh                          # → .build-fuzz/fuzz-loader
//     mkdir -p fuzz-corpus-work && cp Tests/Fuzz/seeds/* fuzz-corpus-work/
//     .build-fuzz/fuzz-loader fuzz-corpus-work -max_len=16384 -max_total_time=1800 -print_final_stats=1
//
// Seeds are the small per-operator fixtures (valid models exercising every kernel's Prepare).
import InferenceCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLoader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var limits = ModelLimits()
    limits.maximumTensorBytes = 1 << 24
    limits.maximumArenaBytes = 1 << 26
    limits.maximumGraphElements = 1 << 14
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let model = try? Model(bytes: bytes, limits: limits) else { return 0 }
    // Exercise the read-only API the CLI uses.
    _ = model.operatorHistogram
    for name in model.metadataNames { _ = model.metadata(named: name) }
    guard let interpreter = try? Interpreter(model: model, registry: .reference) else { return 0 }
    // Small graphs are also run once (on zeroed inputs), so AddressSanitizer checks every kernel's
    // memory accesses against what Prepare validated. Large ones would only slow the fuzzer down.
    if interpreter.arenaByteCount <= 1 << 16 {
        for index in 0..<interpreter.inputCount {
            let input = interpreter.inputBytes(index)
            if let base = input.baseAddress { base.initializeMemory(as: UInt8.self, repeating: 0, count: input.count) }
        }
        _ = try? interpreter.invoke()
    }
    return 0
}
