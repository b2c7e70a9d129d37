/// How an LED's line was found on its chip.
public enum GPIOLineLookup: String, Sendable, Hashable {
    /// A line of that name (`GPIO17`), as the device tree's `gpio-line-names` give it.
    case name
    /// No chip names the line, and `GPIOn` was taken as header GPIO n: offset n of the Raspberry
    /// Pi's header controller (Debian's Pi 5 device tree names no RP1 line; the Pi 3 and 4 trees
    /// call GPIO4 `GPIO_GCLK` and GPIO14 `TXD1`).
    case headerNumber = "header number"
}

/// One chip's lines as the LED lookup reads them: every line's name and holder, read once from the
/// kernel (`GPIOChip.table()`), or written by a test as a board's device tree would give them.
public struct GPIOChipTable: Sendable, Equatable {
    /// One line of a chip.
    public struct Line: Sendable, Equatable {
        /// The device tree's name for it; empty when it has none.
        public var name: String
        public var isUsed: Bool
        /// Who holds it, empty when free or unnamed.
        public var consumer: String
        public init(name: String, isUsed: Bool = false, consumer: String = "") {
            self.name = name
            self.isUsed = isUsed
            self.consumer = consumer
        }
    }

    public var chip: GPIOChipDescription
    /// The lines by offset.
    public var lines: [Line]
    public init(chip: GPIOChipDescription, lines: [Line]) {
        self.chip = chip
        self.lines = lines
    }
}

/// Finds LED lines the way an owner names them: `GPIO17`.
///
/// First by line name on any chip (the first chip that has it wins, as libgpiod's tools do): boards
/// and kernels number their chips differently, but a device tree that names its lines names them
/// the same everywhere. Then, for a `GPIOn` name no chip has, by header number on a Raspberry
/// Pi's header controller: header GPIO n is offset n of `pinctrl-rp1` (Pi 5, whose bank 0 holds
/// the header), `pinctrl-bcm2711` (Pi 4) or `pinctrl-bcm2835` (Pi 3, Zero 2 W). Only there: on any
/// other chip an offset says nothing about a header pin.
public enum GPIOLineResolver {
    /// The controllers whose offset n is header GPIO n.
    public static let headerChipLabels = ["pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835"]
    /// The GPIOs that reach the 40-pin header.
    public static let headerGPIOs = 0...27

    /// n for `GPIOn` with n a header GPIO (`GPIO4` → 4; `GPIO04`, `GPIO28` and `gpio4` → nil).
    public static func headerNumber(of name: String) -> Int? {
        guard name.hasPrefix("GPIO") else { return nil }
        let digits = name.dropFirst(4)
        guard (1...2).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              digits.count == 1 || digits.first != "0", let number = Int(digits), headerGPIOs.contains(number) else { return nil }
        return number
    }

    /// Where each of `names` is, on `chips` (in chip order); names found nowhere are left out.
    public static func resolve(_ names: [String], on chips: [GPIOChipTable]) -> [String: GPIOLineLocation] {
        var found: [String: GPIOLineLocation] = [:]
        for table in chips {
            for name in names where found[name] == nil {
                if let offset = table.lines.firstIndex(where: { $0.name == name }) {
                    found[name] = location(name, on: table, at: offset, foundBy: .name)
                }
            }
        }
        guard let header = chips.first(where: { headerChipLabels.contains($0.chip.label) }) else { return found }
        for name in names where found[name] == nil {
            if let number = headerNumber(of: name), number < header.lines.count {
                found[name] = location(name, on: header, at: number, foundBy: .headerNumber)
            }
        }
        return found
    }

    private static func location(_ name: String, on table: GPIOChipTable, at offset: Int, foundBy: GPIOLineLookup) -> GPIOLineLocation {
        let line = table.lines[offset]
        return GPIOLineLocation(name: name, chip: table.chip, offset: offset, isUsed: line.isUsed,
                                consumer: line.consumer, foundBy: foundBy)
    }
}
