import Testing
@testable import Outputs

@Suite struct GPIOChipsTests {
    @Test func theBackendNamesTheLibgpiodGenerationItWasBuiltAgainst() {
        let backend = GPIOEnumeration.backend
        #expect(backend.hasPrefix("libgpiod v1 ") || backend.hasPrefix("libgpiod v2 "))
    }

    @Test func aDirectoryWithoutChipsGivesNoChipsAndNoLines() {
        #expect(GPIOEnumeration.chipPaths(directory: "/nonexistent").isEmpty)
        #expect(GPIOEnumeration.locate(lines: ["GPIO17"], directory: "/nonexistent").isEmpty)
    }

    @Test func openingAMissingChipNamesThePath() {
        do {
            _ = try GPIOChip(path: "/nonexistent/gpiochip9")
            Issue.record("opened a chip that does not exist")
        } catch {
            #expect(error.subject == "/nonexistent/gpiochip9")
        }
    }

    // MARK: finding LED lines by name, or by header number on a Raspberry Pi

    static let defaultLEDLines = ["GPIO17", "GPIO27", "GPIO22", "GPIO23", "GPIO24", "GPIO25"]

    static func chip(_ number: Int, label: String, names: [String]) -> GPIOChipTable {
        GPIOChipTable(chip: GPIOChipDescription(path: "/dev/gpiochip\(number)", name: "gpiochip\(number)", label: label, lineCount: names.count),
                      lines: names.map { GPIOChipTable.Line(name: $0) })
    }

    /// The Pi 3/4 device trees' header names: GPIO0…GPIO27, except the lines they name after a function.
    static let pi4HeaderNames: [String] = (0..<58).map { offset in
        let functions = [0: "ID_SDA", 1: "ID_SCL", 2: "SDA1", 3: "SCL1", 4: "GPIO_GCLK", 7: "SPI_CE1_N", 8: "SPI_CE0_N",
                         9: "SPI_MISO", 10: "SPI_MOSI", 11: "SPI_SCLK", 14: "TXD1", 15: "RXD1"]
        if let name = functions[offset] { return name }
        return offset < 28 ? "GPIO\(offset)" : ""
    }

    @Test("On a Pi 5 with Debian's device tree (no RP1 line named) the six default LEDs are found by header number on pinctrl-rp1")
    func aPi5FindsTheDefaultLEDsByHeaderNumber() {
        // Debian's bcm2712-rpi-5-b.dtb: the SoC's own pinctrl first, RP1's 54 unnamed lines after it.
        let chips = [Self.chip(0, label: "pinctrl-bcm2712", names: Array(repeating: "", count: 32)),
                     Self.chip(1, label: "pinctrl-bcm2712", names: Array(repeating: "", count: 4)),
                     Self.chip(4, label: "pinctrl-rp1", names: Array(repeating: "", count: 54))]
        let found = GPIOLineResolver.resolve(Self.defaultLEDLines, on: chips)
        #expect(found.count == 6)
        for name in Self.defaultLEDLines {
            let location = found[name]
            #expect(location?.chip.path == "/dev/gpiochip4", "\(name)")
            #expect(location?.offset == Int(name.dropFirst(4)), "\(name)")
            #expect(location?.foundBy == .headerNumber, "\(name)")
        }
    }

    @Test("On a Pi 4 named lines are found by name, and GPIO4 (named GPIO_GCLK) by header number")
    func aPi4FindsNamedLinesByNameAndFunctionNamedOnesByNumber() {
        let chips = [Self.chip(0, label: "pinctrl-bcm2711", names: Self.pi4HeaderNames),
                     Self.chip(1, label: "raspberrypi-exp-gpio", names: ["BT_ON", "WL_ON", "PWR_LED_OFF", "GLOBAL_RESET", "VDD_SD_IO_SEL", "CAM_GPIO", "SD_PWR_ON", ""])]
        let found = GPIOLineResolver.resolve(Self.defaultLEDLines + ["GPIO4", "GPIO14"], on: chips)
        for name in Self.defaultLEDLines {
            #expect(found[name]?.foundBy == .name && found[name]?.chip.label == "pinctrl-bcm2711" && found[name]?.offset == Int(name.dropFirst(4)), "\(name)")
        }
        #expect(found["GPIO4"]?.offset == 4 && found["GPIO4"]?.foundBy == .headerNumber)
        #expect(found["GPIO14"]?.offset == 14 && found["GPIO14"]?.foundBy == .headerNumber)
    }

    @Test("The Pi 3's pinctrl-bcm2835 takes header numbers too; a name on any chip wins over a number")
    func aNameWinsOverAHeaderNumber() {
        let chips = [Self.chip(0, label: "pinctrl-bcm2835", names: Array(repeating: "", count: 54)),
                     Self.chip(1, label: "gpio-expander", names: ["", "GPIO17"])]
        let found = GPIOLineResolver.resolve(["GPIO17", "GPIO22"], on: chips)
        #expect(found["GPIO17"]?.chip.path == "/dev/gpiochip1" && found["GPIO17"]?.offset == 1 && found["GPIO17"]?.foundBy == .name)
        #expect(found["GPIO22"]?.chip.path == "/dev/gpiochip0" && found["GPIO22"]?.offset == 22 && found["GPIO22"]?.foundBy == .headerNumber)
    }

    @Test("Offsets mean nothing on other chips: unnamed lines of gpio-sim or an expander are not found by number")
    func noHeaderNumbersOffAPi() {
        let chips = [Self.chip(0, label: "gpio-sim.0-node0", names: Array(repeating: "", count: 28)),
                     Self.chip(1, label: "pinctrl-bcm2712", names: Array(repeating: "", count: 32))]
        #expect(GPIOLineResolver.resolve(Self.defaultLEDLines, on: chips).isEmpty)
    }

    @Test("Only GPIO0…GPIO27 are header numbers, written as the Pi's docs write them",
          arguments: [("GPIO0", 0), ("GPIO4", 4), ("GPIO27", 27), ("GPIO28", nil), ("GPIO04", nil), ("gpio4", nil),
                      ("GPIO", nil), ("GPIO-1", nil), ("GPIO١", nil), ("GPIO123", nil), ("GPIO17 ", nil)] as [(String, Int?)])
    func headerNumbers(name: String, number: Int?) {
        #expect(GPIOLineResolver.headerNumber(of: name) == number)
    }

    @Test("A header number past the chip's last line is not found")
    func aHeaderNumberPastTheChipIsNotFound() {
        let chips = [Self.chip(0, label: "pinctrl-rp1", names: Array(repeating: "", count: 20))]
        let found = GPIOLineResolver.resolve(["GPIO19", "GPIO20"], on: chips)
        #expect(found["GPIO19"]?.offset == 19)
        #expect(found["GPIO20"] == nil)
    }
}

