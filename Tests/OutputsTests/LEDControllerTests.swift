import LinuxSystem
import Testing
@testable import Outputs

/// Instants in milliseconds from an arbitrary start, so tests read as timelines.
private func ms(_ milliseconds: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000_000 + milliseconds * 1_000_000) }

private let squats = 3, lunges = 1

@Suite struct LEDControllerTests {
    func controller() -> LEDController { LEDController(actionCount: 5, now: ms(0)) }

    @Test func startingUpLeavesEveryActionLEDOffWhileTheStatusLEDBeatsItsHeart() {
        let leds = controller()
        #expect(leds.levels(at: ms(0)) == LEDLevels(actions: 0, status: true))
        #expect(leds.levels(at: ms(150)) == LEDLevels(actions: 0, status: false))
        #expect(leds.levels(at: ms(250)) == LEDLevels(actions: 0, status: true))
        #expect(leds.levels(at: ms(400)) == LEDLevels(actions: 0, status: false))
        #expect(leds.levels(at: ms(1500)) == LEDLevels(actions: 0, status: true))
    }

    @Test func aSequenceOfDecisionsLightsOnlyTheCurrentActionsLED() {
        var leds = controller()
        let decisions: [(ActionIndication, UInt64)] = [
            (.startingUp, 0), (.noPerson, 0), (.action(squats), 1 << 3), (.action(squats), 1 << 3),
            (.other, 0), (.action(lunges), 1 << 1), (.noPerson, 0), (.action(0), 1),
        ]
        for (step, (decision, expected)) in decisions.enumerated() {
            let now = ms(Int64(step) * 2000 + 500)  // between heartbeats: status off
            leds.show(decision, at: now)
            #expect(leds.levels(at: now).actions == expected, "after \(decision)")
        }
    }

    @Test func lowConfidenceBlinksTheBestGuessAtTwoHertzAndKeepsItsPhase() {
        var leds = controller()
        leds.show(.lowConfidence(bestGuess: squats), at: ms(1000))
        #expect(leds.levels(at: ms(1000)).isOn(action: squats))
        #expect(leds.levels(at: ms(1249)).isOn(action: squats))
        #expect(!leds.levels(at: ms(1250)).isOn(action: squats))
        #expect(!leds.levels(at: ms(1499)).isOn(action: squats))
        #expect(leds.levels(at: ms(1500)).isOn(action: squats))
        // The same decision again must not restart the blink.
        leds.show(.lowConfidence(bestGuess: squats), at: ms(1300))
        #expect(!leds.levels(at: ms(1300)).isOn(action: squats))
        #expect(leds.levels(at: ms(1300)).actions & ~(1 << 3) == 0)
    }

    @Test func lowConfidenceWithoutAGuessBlinksTheLastConfidentActionOrNothing() {
        var leds = controller()
        leds.show(.lowConfidence(bestGuess: nil), at: ms(0))
        #expect(leds.levels(at: ms(0)).actions == 0)
        leds.show(.action(lunges), at: ms(100))
        leds.show(.lowConfidence(bestGuess: nil), at: ms(200))
        #expect(leds.levels(at: ms(200)).actions == 1 << 1)
        #expect(leds.levels(at: ms(450)).actions == 0)
    }

    @Test func aCountedRepetitionWinksALitLEDOffBriefly() {
        var leds = controller()
        leds.show(.action(squats), at: ms(300))
        leds.repetitionCounted(action: squats, at: ms(600))
        #expect(!leds.levels(at: ms(600)).isOn(action: squats))
        #expect(!leds.levels(at: ms(749)).isOn(action: squats))
        #expect(leds.levels(at: ms(750)).isOn(action: squats))
        #expect(leds.nextChange(after: ms(600)) == ms(750))
    }

    @Test func repetitionsCreditedTogetherWinkOneAfterAnotherWithGaps() {
        var leds = controller()
        leds.show(.action(squats), at: ms(300))
        for _ in 0..<3 { leds.repetitionCounted(action: squats, at: ms(600)) }
        // Winks of 150 ms, gaps of 200 ms: off 600-750, 950-1100, 1300-1450.
        let expectedOff = [600, 700, 749, 950, 1099, 1300, 1449]
        let expectedOn = [750, 900, 949, 1100, 1299, 1450, 2000]
        for time in expectedOff { #expect(!leds.levels(at: ms(Int64(time))).isOn(action: squats), "at \(time) ms") }
        for time in expectedOn { #expect(leds.levels(at: ms(Int64(time))).isOn(action: squats), "at \(time) ms") }
        #expect(leds.nextChange(after: ms(760)) == ms(950))
        #expect(leds.nextChange(after: ms(1000)) == ms(1100))
        // A repetition counted during the burst joins its end, after the last gap.
        leds.repetitionCounted(action: squats, at: ms(1400))
        #expect(leds.levels(at: ms(1500)).isOn(action: squats))
        #expect(!leds.levels(at: ms(1650)).isOn(action: squats))
        #expect(leds.levels(at: ms(1800)).isOn(action: squats))
    }

    @Test func repetitionsCreditedAsTheirActionIsNamedWinkAfterItsLEDComesOn() {
        // Without the delay the first wink would coincide with the LED coming on and not be seen.
        var leds = controller()
        leds.show(.action(lunges), at: ms(1000))
        leds.repetitionCounted(action: lunges, at: ms(1000))
        #expect(leds.levels(at: ms(1000)).isOn(action: lunges))
        #expect(leds.nextChange(after: ms(1000)) == ms(1200))   // the wink begins a gap later
        #expect(!leds.levels(at: ms(1200)).isOn(action: lunges))
        #expect(leds.levels(at: ms(1350)).isOn(action: lunges))
    }

    @Test func aRepetitionOfAnUnlitActionFlashesItsLEDOn() {
        var leds = controller()
        leds.show(.other, at: ms(300))
        leds.repetitionCounted(action: lunges, at: ms(600))
        #expect(leds.levels(at: ms(700)).actions == 1 << 1)
        #expect(leds.levels(at: ms(800)).actions == 0)
    }

    @Test func theNextChangeIsTheEarliestOfBlinkFlashAndHeartbeat() {
        var leds = controller()
        #expect(leds.nextChange(after: ms(0)) == ms(100))      // heartbeat pulse ends
        #expect(leds.nextChange(after: ms(250)) == ms(300))
        #expect(leds.nextChange(after: ms(400)) == ms(1500))   // long pause to the next beat
        leds.show(.lowConfidence(bestGuess: squats), at: ms(400))
        #expect(leds.nextChange(after: ms(400)) == ms(650))    // blink turns off first
        leds.repetitionCounted(action: lunges, at: ms(420))
        #expect(leds.nextChange(after: ms(500)) == ms(600))    // the flash begins a gap after the blink did
        #expect(leds.nextChange(after: ms(600)) == ms(650))    // the blink turns off first
    }

    @Test func everyLevelChangeHappensExactlyAtAnAnnouncedDeadline() {
        // Walk 5 s in 1 ms steps: a level may only differ from the previous one at an instant the
        // controller announced, so a loop sleeping until nextChange never misses an edge.
        var leds = controller()
        leds.show(.lowConfidence(bestGuess: 2), at: ms(130))
        leds.repetitionCounted(action: 4, at: ms(777))
        leds.setStatus(.cameraLost, at: ms(2222))
        var previous = leds.levels(at: ms(0))
        var deadline = leds.nextChange(after: ms(0))
        for t in Int64(1)...5000 {
            let levels = leds.levels(at: ms(t))
            if levels != previous { #expect(deadline == ms(t), "unannounced change at \(t) ms") }
            if let due = deadline, due <= ms(t) { deadline = leds.nextChange(after: ms(t)) }
            if levels != previous { previous = levels }
        }
    }

    @Test func aLostCameraBlinksTheStatusLEDFastAndRecoveryBringsTheHeartbeatBack() {
        var leds = controller()
        leds.show(.action(squats), at: ms(0))
        leds.setStatus(.cameraLost, at: ms(5000))
        let pattern = (0..<6).map { leds.levels(at: ms(5000 + Int64($0) * 100)).status }
        #expect(pattern == [true, false, true, false, true, false])
        #expect(leds.nextChange(after: ms(5050)) == ms(5100))
        leds.setStatus(.healthy, at: ms(9000))
        #expect(leds.levels(at: ms(9000)).status)
        #expect(!leds.levels(at: ms(9150)).status)
        #expect(leds.nextChange(after: ms(9400)) == ms(10500))
    }

    @Test func stoppingTurnsEveryLEDOffForGoodAndNeedsNoTimer() {
        var leds = controller()
        leds.show(.action(squats), at: ms(0))
        leds.repetitionCounted(action: squats, at: ms(10))
        leds.setStatus(.stopped, at: ms(20))
        #expect(leds.levels(at: ms(20)) == .off)
        #expect(leds.levels(at: ms(5000)) == .off)
        #expect(leds.nextChange(after: ms(20)) == nil)
    }
}

/// Records what a driver writes.
final class RecordingLEDLines: LEDLines {
    var values: [Bool]
    var writes: [(line: Int, on: Bool)] = []
    init(count: Int) { values = Array(repeating: false, count: count) }
    var count: Int { values.count }
    func setLine(_ index: Int, on: Bool) throws(LEDError) {
        values[index] = on
        writes.append((index, on))
    }
}

@Suite struct LEDDriverTests {
    @Test func theFirstApplyWritesEveryLineAndLaterOnesOnlyChangedLines() throws {
        let lines = RecordingLEDLines(count: 6)
        var driver = LEDDriver(lines: lines, actionCount: 5)
        try driver.apply(LEDLevels(actions: 1 << 3, status: true))
        #expect(lines.writes.count == 6)
        #expect(lines.values == [false, false, false, true, false, true])
        try driver.apply(LEDLevels(actions: 1 << 3, status: true))
        #expect(lines.writes.count == 6)
        try driver.apply(LEDLevels(actions: 1 << 1, status: true))
        #expect(lines.writes.count == 8)
        #expect(lines.writes.suffix(2).map(\.line) == [1, 3])
        try driver.apply(LEDLevels(actions: 1 << 1, status: false))
        #expect(lines.writes.last! == (5, false))
        #expect(driver.lineWrites == 9)
    }

    @Test func turningOffLeavesEveryLineLow() throws {
        let lines = RecordingLEDLines(count: 3)
        var driver = LEDDriver(lines: lines, actionCount: 2)
        try driver.apply(LEDLevels(actions: 0b11, status: true))
        try driver.turnOff()
        #expect(lines.values == [false, false, false])
    }

    @Test func aWholeSessionThroughControllerAndDriverEndsWithEverythingOff() throws {
        let lines = RecordingLEDLines(count: 6)
        var driver = LEDDriver(lines: lines, actionCount: 5)
        var leds = LEDController(actionCount: 5, now: ms(0))
        var now = ms(0)
        // A loop that wakes only at deadlines and decisions.
        let decisions: [(Int64, ActionIndication)] = [(2000, .noPerson), (4000, .action(squats)), (6000, .lowConfidence(bestGuess: squats)), (8000, .action(squats))]
        var next = 0
        while now < ms(10_000) {
            if next < decisions.count, decisions[next].0 <= now.nanoseconds / 1_000_000 - 1_000_000 {
                leds.show(decisions[next].1, at: now)
                next += 1
            }
            try driver.apply(leds.levels(at: now))
            let due = leds.nextChange(after: now) ?? ms(10_000)
            let decisionDue = next < decisions.count ? ms(decisions[next].0) : ms(10_000)
            now = min(due, decisionDue)
        }
        #expect(lines.values[squats])
        leds.setStatus(.stopped, at: now)
        try driver.apply(leds.levels(at: now))
        #expect(lines.values == Array(repeating: false, count: 6))
        // Writes stayed proportional to edges, not to wake-ups.
        #expect(driver.lineWrites < 60)
    }
}

@Suite struct ConsoleLEDTests {
    @Test func theConsoleBackendPrintsEachChangeWithRoleAndLine() throws {
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]) }
        var clockValue = ms(0)
        let leds = [LEDLine(lineName: "GPIO23", role: "squats"), LEDLine(lineName: "GPIO25", role: "status")]
        var driver = LEDDriver(lines: ConsoleLEDLines(leds: leds, fileDescriptor: pipeEnds[1], clock: { clockValue }), actionCount: 1)
        clockValue = ms(1500)
        try driver.apply(LEDLevels(actions: 1, status: false))
        try driver.apply(LEDLevels(actions: 1, status: true))
        close(pipeEnds[1])
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(pipeEnds[0], &bytes, bytes.count)
        let text = String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self)
        #expect(text == "[1.500] led squats (GPIO23) on\n[1.500] led status (GPIO25) off\n[1.500] led status (GPIO25) on\n")
    }
}

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LEDLayoutTests {
    @Test func labelsMapToTheirLEDAndUnmappedLabelsShowAsOther() throws {
        let layout = try LEDLayout(actions: [("squats", "GPIO23"), ("lunges", "GPIO27")], statusLine: "GPIO25")
        #expect(layout.indication(forAction: "lunges") == .action(1))
        #expect(layout.indication(forAction: "burpees") == .other)
        #expect(layout.leds.map(\.lineName) == ["GPIO23", "GPIO27", "GPIO25"])
        #expect(layout.leds.last?.role == "status")
        #expect(layout.actionCount == 2)
    }

    @Test func aLayoutWithMoreActionsThanTheControllerCanDriveIsAnErrorNotATrap() throws {
        let most = (0..<LEDController.maximumActionCount).map { ("action\($0)", "GPIO\($0)") }
        #expect(try LEDLayout(actions: most, statusLine: "STATUS").actionCount == LEDController.maximumActionCount)
        #expect(throws: LEDError("65 action LEDs configured; posewatch drives at most 64")) {
            try LEDLayout(actions: most + [("one_more", "GPIO99")], statusLine: "STATUS")
        }
    }
}
