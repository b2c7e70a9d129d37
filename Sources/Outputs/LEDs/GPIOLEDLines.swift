import CGPIOD
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One LED: the GPIO line name it is wired to and what it shows (`squats`, `status`), for messages.
public struct LEDLine: Sendable, Equatable {
    public var lineName: String
    public var role: String
    public init(lineName: String, role: String) {
        self.lineName = lineName
        self.role = role
    }
}

/// LED lines on real GPIO chips through libgpiod (v1 or v2, via the CGPIOD shim). Lines are found by
/// name on whichever chip has them (a Pi 5 has the header on another chip than a Pi 4), or by
/// header number where the board leaves them unnamed (`GPIOLineResolver`), requested as outputs,
/// initially off, with consumer `posewatch`; one request per chip.
///
/// The only owner of the requests: when it ends, every line is driven off and released, so LEDs are
/// never left lit by a stopped service. Chips stay open as long as their request, because libgpiod v1
/// releases a chip's lines when the chip is closed.
public struct GPIOLEDLines: LEDLines, ~Copyable {
    private let chips: [OpaquePointer]
    private let requests: [OpaquePointer]
    /// For each LED line: which request drives it and its index inside that request.
    private let routes: [(request: Int, index: Int)]
    /// The LEDs in line order.
    public let leds: [LEDLine]
    public var count: Int { leds.count }

    /// Finds and requests `leds` under `directory` (`/dev`).
    ///
    /// Throws one-line errors: a line no chip has (naming the chips searched), a line held by someone
    /// else (naming the line, the chip and the holder), the same line configured twice, or the
    /// failed request's errno.
    public init(leds: [LEDLine], consumer: String = "posewatch", directory: String = "/dev") throws(LEDError) {
        for (position, led) in leds.enumerated() {
            if let earlier = leds[..<position].first(where: { $0.lineName == led.lineName }) {
                throw LEDError("LED line \(MessageExcerpt.plain(led.lineName)) is configured twice (\(earlier.role) and \(led.role))")
            }
        }
        let chipPaths = GPIOEnumeration.chipPaths(directory: directory)
        let found = GPIOEnumeration.locate(lines: leds.map(\.lineName), directory: directory)
        for led in leds {
            guard let location = found[led.lineName] else {
                let searched = chipPaths.isEmpty
                    ? "no GPIO chips under \(MessageExcerpt.path(directory))"
                    : "searched \(chipPaths.map(MessageExcerpt.path).joined(separator: ", "))"
                throw LEDError("LED line \(MessageExcerpt.plain(led.lineName)) (\(led.role)) not found on any GPIO chip (\(searched))")
            }
            if location.isUsed { throw Self.busyError(led, location) }
        }
        // Two names for one line: `GPIO4` by header number and `GPIO_GCLK` by name on a Pi 4.
        for (position, led) in leds.enumerated() {
            let location = found[led.lineName]!
            if let earlier = leds[..<position].first(where: { found[$0.lineName]!.chip.path == location.chip.path && found[$0.lineName]!.offset == location.offset }) {
                throw LEDError("LED lines \(earlier.lineName) (\(earlier.role)) and \(led.lineName) (\(led.role)) are the same line, \(location.chip.path) offset \(location.offset)")
            }
        }
        // Group by chip, keeping the configured order inside each request.
        var chipOrder: [String] = []
        for led in leds where !chipOrder.contains(found[led.lineName]!.chip.path) {
            chipOrder.append(found[led.lineName]!.chip.path)
        }
        var chips: [OpaquePointer] = [], requests: [OpaquePointer] = []
        var routes = Array(repeating: (request: 0, index: 0), count: leds.count)
        func closeAll() {
            for request in requests { pw_gpio_request_release(request) }
            for chip in chips { pw_gpio_chip_close(chip) }
        }
        for (requestIndex, path) in chipOrder.enumerated() {
            guard let chip = pw_gpio_chip_open(path) else {
                let error = Errno.current
                closeAll()
                throw LEDError("cannot open GPIO chip \(MessageExcerpt.path(path)) for the LEDs: \(error)")
            }
            chips.append(chip)
            var offsets: [UInt32] = []
            for (position, led) in leds.enumerated() where found[led.lineName]!.chip.path == path {
                routes[position] = (requestIndex, offsets.count)
                offsets.append(UInt32(found[led.lineName]!.offset))
            }
            let initial = [Int32](repeating: 0, count: offsets.count)
            guard let request = pw_gpio_request_outputs(chip, offsets, offsets.count, consumer, initial) else {
                let error = Errno.current
                closeAll()
                let onThisChip = leds.filter { found[$0.lineName]!.chip.path == path }
                // Someone may have taken a line between the check and the request: say who.
                if error == .busy {
                    let now = GPIOEnumeration.locate(lines: onThisChip.map(\.lineName), directory: directory)
                    if let led = onThisChip.first(where: { now[$0.lineName]?.isUsed == true }) {
                        throw Self.busyError(led, now[led.lineName]!)
                    }
                }
                let names = onThisChip.map { MessageExcerpt.plain($0.lineName) }.joined(separator: ", ")
                throw LEDError("cannot request LED lines \(names) on \(MessageExcerpt.path(path)) as outputs: \(error)")
            }
            requests.append(request)
        }
        self.chips = chips
        self.requests = requests
        self.routes = routes
        self.leds = leds
    }

    private static func busyError(_ led: LEDLine, _ location: GPIOLineLocation) -> LEDError {
        // The holder and the chip's label come from the kernel (another program's consumer string).
        let holder = location.consumer.isEmpty ? "an unnamed consumer" : MessageExcerpt.quoted(location.consumer)
        return LEDError("LED line \(MessageExcerpt.plain(led.lineName)) (\(led.role)) on \(MessageExcerpt.path(location.chip.path)) [\(MessageExcerpt.plain(location.chip.label))] offset \(location.offset) is busy: held by \(holder)")
    }

    public mutating func setLine(_ index: Int, on: Bool) throws(LEDError) {
        let route = routes[index]
        guard pw_gpio_request_set_value(requests[route.request], route.index, on ? 1 : 0) == 0 else {
            throw LEDError("cannot set LED line \(MessageExcerpt.plain(leds[index].lineName)) (\(leds[index].role)): \(Errno.current)")
        }
    }

    deinit {
        // Off first: after release the kernel keeps (or, on some drivers, resets) the last value;
        // driving it off ourselves makes "left off" true everywhere.
        for route in routes { _ = pw_gpio_request_set_value(requests[route.request], route.index, 0) }
        for request in requests { pw_gpio_request_release(request) }
        for chip in chips { pw_gpio_chip_close(chip) }
    }
}

/// LEDs printed to a file descriptor (stdout) when they change: `--leds console` on machines without
/// GPIO, and a readable trace of what the LEDs would do.
public struct ConsoleLEDLines: LEDLines {
    /// The LEDs in line order.
    public let leds: [LEDLine]
    private let fileDescriptor: Int32
    private let clock: () -> MonotonicInstant
    private let start: MonotonicInstant
    public var count: Int { leds.count }
    public private(set) var lostOutput: Errno?

    /// Prints to `fileDescriptor`, stamping each line with seconds since creation.
    public init(leds: [LEDLine], fileDescriptor: Int32 = 1, clock: @escaping () -> MonotonicInstant = MonotonicInstant.now) {
        self.leds = leds
        self.fileDescriptor = fileDescriptor
        self.clock = clock
        start = clock()
    }

    public mutating func setLine(_ index: Int, on: Bool) throws(LEDError) {
        var buffer = ByteBuffer(capacity: 128)
        buffer.append("[")
        buffer.append(decimal: (clock() - start).seconds, fractionDigits: 3)
        buffer.append("] led ")
        buffer.appendEscapingControls(leds[index].role)
        buffer.append(" (")
        buffer.appendEscapingControls(leds[index].lineName)
        buffer.append(on ? ") on\n" : ") off\n")
        let fd = fileDescriptor
        // One small write (a line is under 128 bytes): all of it or an error; EAGAIN (a
        // non-blocking stream that is full) loses the line, not the stream.
        let failure: Errno? = buffer.withBytes { bytes in
            while Glibc.write(fd, bytes.baseAddress, bytes.count) < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN ? nil : Errno.current
            }
            return nil
        }
        if let failure {
            lostOutput = lostOutput ?? failure
            throw LEDError("console LEDs: cannot write: \(failure)")
        }
    }
}
