// libFuzzer target over the config file: `ApplianceConfiguration.parse` (the TOML subset and the
// key-by-key reader), what `posewatch run` does at start and on SIGHUP. Any bytes must give a
// configuration `run` can use or a `ConfigurationError` that is one short, clean line pointing at a
// real line of the input; never a trap, and (libFuzzer's -timeout and -rss_limit_mb) never more
// than a second or 512 MB for one input.
//
// Inputs starting with the byte 0xFF (never valid UTF-8, so never a config) are a pattern: the
// rest is repeated up to `ApplianceConfiguration.maximumFileBytes` and that is parsed too. So the
// fuzzer's short inputs also try the largest files the limits allow (many keys, long strings, deep
// arrays...), where anything worse than linear would show as a timeout.
//
// Build and run (outside SwiftPM; build.sh compiles LinuxSystem, Outputs and the config files of
// Appliance with -O -sanitize=fuzzer,address):
//
//     Tests/Fuzz/run-fuzz.sh 600 config     # build, then 600 s from Tests/Fuzz/seeds-config (run-fuzz.sh
//                                           # passes the dictionary, -timeout=1 and -rss_limit_mb=512)
import LinuxSystem
import Outputs

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    check(input)
    if input.first == 0xFF, input.count > 1 {
        let pattern = input.dropFirst()
        var file: [UInt8] = []
        file.reserveCapacity(ApplianceConfiguration.maximumFileBytes)
        while file.count + pattern.count <= ApplianceConfiguration.maximumFileBytes { file.append(contentsOf: pattern) }
        check(file)
    }
    return 0
}

private func check(_ bytes: [UInt8]) {
    let configuration: ApplianceConfiguration
    do {
        configuration = try ApplianceConfiguration.parse(bytes, path: "/etc/posewatch/posewatch.toml")
    } catch {
        checkMessage(error, of: bytes)
        return
    }
    // What was accepted, `run` can drive: its LED layout and controller are built without a trap.
    guard let layout = try? LEDLayout(actions: configuration.actionLEDLines, statusLine: configuration.statusLEDLine) else {
        fatalError("an accepted config has an LED layout LEDLayout refuses: \(configuration.actionLEDLines.count) action LEDs")
    }
    _ = LEDController(actionCount: layout.actionCount, now: MonotonicInstant(nanoseconds: 0))
}

private func checkMessage(_ error: ConfigurationError, of bytes: [UInt8]) {
    let message = error.description
    for scalar in message.unicodeScalars {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            fatalError("a raw control character U+\(String(scalar.value, radix: 16)) in the message: \(message.debugDescription)")
        default: break
        }
    }
    // The longest message repeats a key twice (64 characters each, escapes whole, then "…") around
    // posewatch's own text: well under 400 characters.
    if message.unicodeScalars.count > 400 { fatalError("a message of \(message.unicodeScalars.count) characters: \(message.debugDescription)") }
    if let line = error.line {
        let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        if !(1...lines).contains(line) { fatalError("line \(line) of a \(lines)-line input: \(message.debugDescription)") }
    } else if bytes.count <= ApplianceConfiguration.maximumFileBytes {
        fatalError("no line in a message about an input within the size limit: \(message.debugDescription)")
    }
}
