import Testing
@testable import Actions

/// The set bookkeeping on hand-made repetitions: what is counted, kept, credited and dropped.
@Suite struct RepetitionLedgerTests {
    private let configuration = RepetitionCounterConfiguration()

    /// One frame's label through the ledger, as `RepetitionCounter.process` gives it.
    @discardableResult
    private func frame(_ ledger: RepetitionLedger, at time: Double, label: ActionLabel?) -> RepetitionLedger.Handover {
        ledger.beginFrame(at: time)
        ledger.endPausedSets(at: time)
        if let label, label.isCountable { return ledger.credit(to: label) }
        if label == .other { ledger.labelIsOther(at: time) }
        return RepetitionLedger.Handover()
    }

    /// A rule repetition seen unnamed at `time` and kept for the set.
    private func keep(_ ledger: RepetitionLedger, at time: Double, passesLegCues: Bool = true, waitsForLegs: Bool = false) {
        frame(ledger, at: time, label: nil)
        ledger.ruleRepetitionSeen(at: time)
        ledger.keep(at: time, passesLegCues: passesLegCues, waitsForLegs: waitsForLegs, ended: false)
    }

    private func events(_ ledger: RepetitionLedger) -> [RepetitionEvent] {
        ledger.sessionCount == 0 ? [] : (1...ledger.sessionCount).map { ledger.event(number: $0) }
    }

    @Test func keptRepetitionsCountWithTheirOwnTimesWhenAnExerciseIsNamed() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        keep(ledger, at: 1)
        keep(ledger, at: 2)
        #expect(ledger.sessionCount == 0 && ledger.pendingCount == 2)
        frame(ledger, at: 3, label: .jumpingJacks)
        #expect(ledger.count(of: .jumpingJacks) == 2 && ledger.pendingCount == 0)
        #expect(events(ledger).map(\.time) == [1, 2])
        #expect(events(ledger).map(\.creditedAt) == [3, 3])
        #expect(events(ledger).map(\.count) == [1, 2])
        #expect(ledger.lastCountedTime == 2)
    }

    @Test func aSetPausedLongerThanTheSetPauseEndsUncounted() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        keep(ledger, at: 1)
        frame(ledger, at: 1 + configuration.setPauseSeconds - 0.1, label: nil)
        #expect(ledger.pendingCount == 1, "not paused long enough yet")
        frame(ledger, at: 1 + configuration.setPauseSeconds + 0.1, label: .jumpingJacks)
        #expect(ledger.sessionCount == 0 && ledger.pendingCount == 0)
    }

    @Test func otherHeldLongerThanTheLabelLagDropsWhatWasKeptBefore() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        keep(ledger, at: 0.5)
        var time = 1.0
        while time <= 1 + configuration.labelLagSeconds + 0.5 {
            frame(ledger, at: time, label: .other)
            time += 0.5
        }
        #expect(ledger.pendingCount == 0, "other held past the lag: the older repetition was other movement")
        ledger.ruleRepetitionSeen(at: time)
        ledger.keep(at: time, passesLegCues: true, waitsForLegs: false, ended: false)
        frame(ledger, at: time + 0.5, label: .other)
        #expect(ledger.pendingCount == 1, "one seen within the lag stays")
        frame(ledger, at: time + 1, label: .jumpingJacks)
        #expect(events(ledger).map(\.time) == [time])
    }

    @Test func squatsAndLungesCreditOnlyTheKeptRepetitionsThatPassedTheirCues() {
        for (label, expected) in [(ActionLabel.squats, [1.0]), (.lunges, [1.0]), (.jumpingJacks, [1.0, 2.0])] {
            let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
            keep(ledger, at: 1, passesLegCues: true)
            keep(ledger, at: 2, passesLegCues: false)
            frame(ledger, at: 3, label: label)
            #expect(events(ledger).map(\.time) == expected, "\(label)")
        }
    }

    @Test func underTheNetsLabelsTheNetCountsAndTheRuleDoesNot() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [.squats])
        ledger.count(.squats, at: 0.5)
        #expect(ledger.sessionCount == 0, "the rule's repetition of a net label is not counted")
        ledger.netRepetition(at: 0.8, seenAt: 1, action: .squats)
        #expect(ledger.count(of: .squats) == 1)
        ledger.netRepetition(at: 1.8, seenAt: 2, action: .lunges)
        #expect(ledger.sessionCount == 1, "another exercise's label: the rule counts that one")
        ledger.netRepetition(at: 2.8, seenAt: 3, action: nil)
        keep(ledger, at: 3)
        frame(ledger, at: 4, label: .squats)
        #expect(events(ledger).map(\.time) == [0.8, 2.8], "the net's kept repetition credited, the rule's dropped")
        #expect(ledger.pendingCount == 0)

        let other = RepetitionLedger(configuration: configuration, netLabels: [.squats])
        other.netRepetition(at: 0.8, seenAt: 1, action: nil)
        keep(other, at: 2)
        frame(other, at: 3, label: .lunges)
        #expect(events(other).map(\.time) == [2], "a rule label: the rule's kept repetition credited, the net's dropped")
    }

    @Test func aKeptRepetitionUnderWayOrStillFoldingItsLegsIsHandedBackToTheRule() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        keep(ledger, at: 1)
        keep(ledger, at: 2)
        ledger.newestIsUnderWay()
        let underWay = frame(ledger, at: 3, label: .jumpingJacks)
        #expect(underWay.awaitsReturn && !underWay.legsStillFolding)
        #expect(events(ledger).map(\.time) == [1], "the one under way counts at its end, not now")

        let folding = RepetitionLedger(configuration: configuration, netLabels: [])
        keep(folding, at: 1, passesLegCues: false, waitsForLegs: true)
        #expect(folding.legWaitingSlot == 0)
        let handover = frame(folding, at: 2, label: .squats)
        #expect(handover.legsStillFolding && folding.sessionCount == 0 && folding.legWaitingSlot == -1)

        let marked = RepetitionLedger(configuration: configuration, netLabels: [])
        keep(marked, at: 1, passesLegCues: false, waitsForLegs: true)
        marked.legsFolded()
        frame(marked, at: 2, label: .squats)
        #expect(events(marked).map(\.time) == [1], "its legs folded before the label came")
    }

    @Test func anEndedRepetitionUnderWayTakesItsEndAsItsTime() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        keep(ledger, at: 1)
        ledger.newestIsUnderWay()
        ledger.repetitionEnded(at: 1.6)
        frame(ledger, at: 2, label: .jumpingJacks)
        #expect(events(ledger).map(\.time) == [1.6])
    }

    @Test func theOldestKeptRepetitionGoesPastTheMaximumAndThePersonLeavingDropsTheRest() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        let maximum = RepetitionCounter.maximumPendingRepetitions
        for index in 0...maximum { keep(ledger, at: 0.1 * Double(index)) }
        #expect(ledger.pendingCount == maximum)
        frame(ledger, at: 7, label: .jumpingJacks)
        #expect(ledger.sessionCount == maximum && ledger.event(number: 1).time == 0.1)

        keep(ledger, at: 8)
        ledger.personLeft()
        frame(ledger, at: 9, label: .jumpingJacks)
        #expect(ledger.sessionCount == maximum)
        ledger.resetSession()
        #expect(ledger.sessionCount == 0 && ledger.count(of: .jumpingJacks) == 0 && ledger.lastCountedTime == -.infinity)
    }

    @Test func aNewSetIsNamedOnlyAfterTheLabelLagWithNothingCountedSinceItsStart() {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [.squats])
        #expect(ledger.namesNewSet(.lunges, at: 10))
        #expect(!ledger.namesNewSet(.lunges, at: 10.5), "named within the label lag")
        #expect(!ledger.namesNewSet(.squats, at: 20), "the net's label: the rule's window is not its")
        ledger.beginFrame(at: 29)
        ledger.count(.lunges, at: 29)
        #expect(!ledger.namesNewSet(.lunges, at: 30), "a repetition counted within the new set's window")
        #expect(ledger.namesNewSet(.lunges, at: 40))
    }
}
