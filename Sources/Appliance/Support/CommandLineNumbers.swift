import ArgumentParser
import Capture
import LinuxSystem

/// A number given on the command line, kept as typed so that a refusal can quote it.
///
/// Parsing never fails here: ArgumentParser's own refusal ("The value '-1' is invalid…") cannot
/// say which numbers are allowed, so every command checks its numbers against
/// `CommandLineLimits` in `validate()` and says the range. Options of this type are declared with
/// `parsing: .unconditional`, so `--fps -1` reaches that check instead of being taken for an
/// option ("Missing value for '--fps'").
struct CommandLineNumber<Value: LosslessStringConvertible & Comparable & Sendable>: ExpressibleByArgument, Sendable, CustomStringConvertible {
    /// The argument as typed.
    let text: String
    /// The number, nil when the text is not one of `Value` (a word, a fraction for a count, too many digits).
    let value: Value?

    init?(argument: String) {
        text = argument
        value = Value(argument)
    }

    /// A default value (shown by `--help`).
    init(_ value: Value) {
        text = "\(value)"
        self.value = value
    }

    var description: String { text }
    var defaultValueDescription: String { text }
}

/// The numbers one option accepts: a closed range, and what the number counts (for messages).
struct CommandLineLimit<Value: LosslessStringConvertible & Comparable & Sendable>: Sendable {
    /// The option, as typed: `--fps`.
    let option: String
    let range: ClosedRange<Value>
    /// What the number is, in the plural: "frames per second", "invokes".
    let unit: String
    /// "a number" or "a whole number".
    let kind: String

    /// "1 to 240", for `--help`.
    var rangeText: String { "\(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))" }

    /// The checked number; a `ValidationError` naming the option, its range and the text otherwise.
    func check(_ number: CommandLineNumber<Value>) throws(ValidationError) -> Value {
        // ClosedRange.contains is false for NaN, so NaN is refused with infinities and the rest.
        guard let value = number.value, range.contains(value) else {
            throw ValidationError("\(option) must be \(kind) from \(rangeText) (\(unit)), not \(MessageExcerpt.plain(number.text))")
        }
        return value
    }

    /// `check` for an option that may be absent.
    func check(_ number: CommandLineNumber<Value>?) throws(ValidationError) -> Value? {
        guard let number else { return nil }
        return try check(number) as Value
    }

    /// 240 rather than 240.0; 1000000 as typed.
    static func format(_ value: Value) -> String {
        let text = "\(value)"
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

extension CommandLineLimit where Value == Double {
    init(option: String, range: ClosedRange<Double>, unit: String) {
        self.init(option: option, range: range, unit: unit, kind: "a number")
    }
}

extension CommandLineLimit where Value == Int {
    init(option: String, range: ClosedRange<Int>, unit: String) {
        self.init(option: option, range: range, unit: unit, kind: "a whole number")
    }
}

/// Every number posewatch takes on its command line and the values it accepts, in one place.
/// The bounds are what the code can use, not what fits in the type: see each one.
enum CommandLineLimits {
    /// `run`, `replay`, `snapshot`, `doctor`: `FrameRate.supported` (1 to 240), the rates the
    /// frame interval, pose window and decimator are built for.
    static let framesPerSecond = CommandLineLimit<Double>(option: "--fps", range: FrameRate.supported, unit: "frames per second")

    /// `snapshot --at`: up to a day. Longer than any recording one would aim a camera with, and
    /// far below where seconds × 10⁹ stops fitting in the nanosecond clock (292 years).
    static let snapshotSeconds = CommandLineLimit<Double>(option: "--at", range: 0...86_400, unit: "seconds")

    /// `bench --iterations`: the latency of every invoke is kept (and with `--kernels`, of every
    /// node: iterations × nodes doubles), so 100 000 bounds that memory (MoveNet: tens of MB)
    /// while being 1000 times the default; at MoveNet's ~10 ms on a Pi it is a quarter of an hour.
    static let benchIterations = CommandLineLimit<Int>(option: "--iterations", range: 1...100_000, unit: "timed invokes")

    /// `bench --warmup`: untimed, nothing kept; the same bound as `--iterations`.
    static let benchWarmup = CommandLineLimit<Int>(option: "--warmup", range: 0...100_000, unit: "untimed invokes")

    /// `bench --threads`: the inference core's worker pool holds at most 64 threads
    /// (`PW_MAX_THREADS`); more were silently cut to 64.
    static let threads = CommandLineLimit<Int>(option: "--threads", range: 1...64, unit: "threads")

    /// `model run --repeat`: nothing is kept per run, so a million (seconds for the test models,
    /// hours for MoveNet) only bounds how long a typo can keep the machine busy.
    static let modelRepetitions = CommandLineLimit<Int>(option: "--repeat", range: 1...1_000_000, unit: "runs")

    /// `replay --frame-size WxH`: each side up to 16384 pixels (V4L2 and JPEG sizes stay below;
    /// the Pi cameras' largest mode is 4056×3040).
    static let frameSide = CommandLineLimit<Int>(option: "--frame-size", range: 1...16_384, unit: "pixels")
}
