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
}
