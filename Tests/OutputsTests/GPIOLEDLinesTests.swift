import Testing
@testable import Outputs

@Suite struct GPIOLEDLinesTests {
    @Test func aMissingLineIsOneErrorNamingTheLineAndTheChipsSearched() {
        do {
            _ = try GPIOLEDLines(leds: [LEDLine(lineName: "GPIO17", role: "jumping_jacks")], directory: "/nonexistent")
            Issue.record("requested a line on no chip")
        } catch {
            #expect(error.description == "LED line GPIO17 (jumping_jacks) not found on any GPIO chip (no GPIO chips under /nonexistent)")
        }
    }

    @Test func theSameLineTwiceIsRefusedBeforeAnyChipIsTouched() {
        do {
            _ = try GPIOLEDLines(leds: [LEDLine(lineName: "GPIO17", role: "squats"), LEDLine(lineName: "GPIO17", role: "status")], directory: "/nonexistent")
            Issue.record("accepted a duplicate line")
        } catch {
            #expect(error.description == "LED line GPIO17 is configured twice (squats and status)")
        }
    }
}
