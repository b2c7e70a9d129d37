import CGPIOD
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// What a GPIO chip says about itself.
public struct GPIOChipDescription: Hashable, Sendable {
    /// The character device (`/dev/gpiochip0`).
    public var path: String
    /// The kernel's name for it (`gpiochip0`).
    public var name: String
    /// The driver's label (`pinctrl-bcm2711` on a Pi 4, `pinctrl-rp1` on a Pi 5, `gpio-sim.0-node0`).
    public var label: String
    public var lineCount: Int
    public init(path: String, name: String, label: String, lineCount: Int) {
        self.path = path
        self.name = name
        self.label = label
        self.lineCount = lineCount
    }
}

/// A GPIO line found on a chip for a configured name, with whether someone already holds it.
public struct GPIOLineLocation: Hashable, Sendable {
    /// The name as configured (`GPIO17`).
    public var name: String
    public var chip: GPIOChipDescription
    public var offset: Int
    public var isUsed: Bool
    /// Who holds it (`posewatch`, `sysfs`, `led0`), empty when free or unnamed.
    public var consumer: String
    /// By its name, or by header number where the device tree leaves it unnamed.
    public var foundBy: GPIOLineLookup
    public init(name: String, chip: GPIOChipDescription, offset: Int, isUsed: Bool, consumer: String,
                foundBy: GPIOLineLookup = .name) {
        self.name = name
        self.chip = chip
        self.offset = offset
        self.isUsed = isUsed
        self.consumer = consumer
        self.foundBy = foundBy
    }
}

/// An open GPIO chip with one owner (`pw_gpio_chip_open` / `pw_gpio_chip_close`).
public struct GPIOChip: ~Copyable {
    let handle: OpaquePointer
    /// The chip's path, name, label and line count, read at open.
    public let description: GPIOChipDescription

    /// Opens a chip by path and reads its description.
    public init(path: String) throws(SystemCallError) {
        guard let handle = pw_gpio_chip_open(path) else { throw SystemCallError("open", path, .current) }
        var name = [CChar](repeating: 0, count: 64), label = [CChar](repeating: 0, count: 64)
        var count: UInt32 = 0
        guard pw_gpio_chip_describe(handle, &name, name.count, &label, label.count, &count) == 0 else {
            let error = Errno.current
            pw_gpio_chip_close(handle)
            throw SystemCallError("describe", path, error)
        }
        self.handle = handle
        self.description = GPIOChipDescription(
            path: path, name: Self.text(name), label: Self.text(label), lineCount: Int(count))
    }

    /// Every line's name and holder (a line that cannot be described reads as unnamed and free).
    public func table() -> GPIOChipTable {
        var lines: [GPIOChipTable.Line] = []
        lines.reserveCapacity(description.lineCount)
        var name = [CChar](repeating: 0, count: 64), consumer = [CChar](repeating: 0, count: 64)
        for offset in 0..<description.lineCount {
            var used: Int32 = 0
            name[0] = 0
            consumer[0] = 0
            guard pw_gpio_line_describe(handle, UInt32(offset), &name, name.count, &consumer, consumer.count, &used) == 0 else {
                lines.append(GPIOChipTable.Line(name: ""))
                continue
            }
            lines.append(GPIOChipTable.Line(name: Self.text(name), isUsed: used != 0, consumer: Self.text(consumer)))
        }
        return GPIOChipTable(chip: description, lines: lines)
    }

    private static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    deinit { pw_gpio_chip_close(handle) }
}

/// Finds GPIO chips and lines by name, the way LEDs are configured (Pi 5 moved the header pins to
/// another chip, so chip numbers are not stable across boards and kernels; line names are).
public enum GPIOEnumeration {
    /// The libgpiod backend compiled in ("libgpiod v1 1.6.3" / "libgpiod v2 2.1.3").
    public static var backend: String { String(cString: pw_gpio_backend()) }

    /// Every `/dev/gpiochip*` path, sorted by number.
    public static func chipPaths(directory: String = "/dev") -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var numbers: [Int] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("gpiochip"), let number = Int(name.dropFirst(8)) { numbers.append(number) }
        }
        return numbers.sorted().map { "\(directory)/gpiochip\($0)" }
    }

    /// Descriptions of every chip that opens; chips that fail to open are returned as errors.
    public static func chips(directory: String = "/dev") -> [Result<GPIOChipDescription, SystemCallError>] {
        chipPaths(directory: directory).map { path in
            do throws(SystemCallError) {
                let chip = try GPIOChip(path: path)
                return .success(chip.description)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Finds each named line on whichever chip has it, or by header number on a Raspberry Pi
    /// (`GPIOLineResolver`).
    public static func locate(lines names: [String], directory: String = "/dev") -> [String: GPIOLineLocation] {
        var tables: [GPIOChipTable] = []
        for path in chipPaths(directory: directory) {
            guard let chip = try? GPIOChip(path: path) else { continue }
            tables.append(chip.table())
        }
        return GPIOLineResolver.resolve(names, on: tables)
    }
}
