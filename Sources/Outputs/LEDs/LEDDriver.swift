import LinuxSystem

/// A set of LED output lines: the action LEDs in configuration order, then the status LED.
///
/// Conformers own their lines (a GPIO line request, the console); `LEDDriver` decides when to write.
public protocol LEDLines: ~Copyable {
    /// Number of lines (action LEDs + 1).
    var count: Int { get }
    /// Drives line `index` on or off.
    mutating func setLine(_ index: Int, on: Bool) throws(LEDError)
    /// Why the lines can no longer be written at all, when they are text on a stream that has
    /// gone (the console backend's standard output: a reader that quit, a full disk); nil while
    /// they work. The loop stops on it, as on a log it can no longer write.
    var lostOutput: Errno? { get }
}

extension LEDLines where Self: ~Copyable {
    /// GPIO lines never lose their output this way: a failed write is an episode, not an end.
    public var lostOutput: Errno? { nil }
}

/// Why an LED backend could not start or write.
public struct LEDError: Error, Sendable, CustomStringConvertible, Equatable {
    /// One line, naming the line, the chip and the holder where they are known.
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Writes `LEDLevels` to lines, touching only the lines whose level changed since the last write
/// (GPIO writes are syscalls, and the loop asks for levels on every wake-up).
public struct LEDDriver<Lines: LEDLines & ~Copyable>: ~Copyable {
    /// The lines written to.
    public var lines: Lines
    /// How many action LEDs come before the status LED.
    public let actionCount: Int
    private var written: LEDLevels?
    /// Line writes made so far (tests check that unchanged levels cost none).
    public private(set) var lineWrites = 0

    /// A driver for `lines`, which must hold `actionCount + 1` lines. Nothing is written until `apply`.
    public init(lines: consuming Lines, actionCount: Int) {
        precondition(lines.count == actionCount + 1, "LED lines must be the action LEDs plus the status LED")
        self.lines = lines
        self.actionCount = actionCount
    }

    /// Drives every line to `levels`, writing only those that differ from the last applied levels
    /// (all of them the first time).
    public mutating func apply(_ levels: LEDLevels) throws(LEDError) {
        for index in 0...actionCount {
            let on = levels.isOn(line: index, actionCount: actionCount)
            if let written, written.isOn(line: index, actionCount: actionCount) == on { continue }
            try lines.setLine(index, on: on)
            lineWrites += 1
        }
        written = levels
    }

    /// Turns everything off (the state posewatch leaves the LEDs in).
    public mutating func turnOff() throws(LEDError) { try apply(.off) }
}
