import Actions
import LinuxSystem
import Outputs

/// What the frame loop does for an event on a frame: a new decision to show and a counted
/// repetition each drive the LEDs, the run summary and a journal entry. Events happen on any frame
/// (a jumping-jacks set counts one every second), so this path allocates nothing after start-up;
/// the loop's allocation test drives it with the demo session's actions and repetitions.
enum LoopEvents {
    /// Shows `decision` on the LEDs and, when what they show changes, records the change in the
    /// summary and logs it (`reps`: the count so far of the decision's action, if it is one).
    /// Returns whether it changed.
    static func show(_ decision: ActionDecision, reps: Int?, leds: inout LEDController, summary: inout RunSummary,
                     layout: LEDLayout, logger: Logger, at now: MonotonicInstant) -> Bool {
        let indication: ActionIndication
        switch decision {
        case .startingUp: indication = .startingUp
        case .noPerson: indication = .noPerson
        case .lowConfidence(let best, _): indication = .lowConfidence(bestGuess: layout.index(ofAction: best.rawValue))
        case .action(let label, _): indication = layout.indication(forAction: label.rawValue)
        }
        let changed = leds.indication != indication
        leds.show(indication, at: now)
        guard changed else { return false }
        summary.actionChanged(to: decision.action.flatMap { layout.index(ofAction: $0.rawValue) }, at: now)
        logger.info(decision.name, LogFields(event: .action, action: decision.name,
                                                   confidence: decision.confidence.map(Double.init), reps: reps))
        return true
    }

    /// Winks the repetition's LED, counts it in the summary and logs it with when it happened.
    static func counted(_ repetition: RepetitionEvent, leds: inout LEDController, summary: inout RunSummary,
                        layout: LEDLayout, logger: Logger, at now: MonotonicInstant) {
        if let index = layout.index(ofAction: repetition.label.rawValue) {
            leds.repetitionCounted(action: index, at: now)
            summary.repetitionCounted(action: index)
        }
        // When it happened on the wall clock: now, less how late it was credited.
        let lateness = repetition.lateness
        let happened = WallClock.microsecondsSinceEpoch() - Int((lateness * 1e6).rounded())
        let late = repetition.isCreditedLate ? Int((lateness * 1000).rounded()) : nil
        // "jumping_jacks: rep 12" is over the 15 bytes a String holds inline: composed in the
        // logger's buffer rather than interpolated (which allocated once per repetition).
        logger.log(.info, LogFields(event: .rep, action: repetition.label.rawValue, reps: repetition.count,
                                    repetitionRealtimeMicroseconds: happened, repetitionLateMilliseconds: late)) { message in
            message.append(repetition.label.rawValue)
            message.append(": rep ")
            message.append(integer: repetition.count)
            if late != nil { message.append(" (credited late)") }
        }
    }
}
