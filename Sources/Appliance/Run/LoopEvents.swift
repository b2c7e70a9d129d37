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

/// The loop's notes about the scene, each said once per episode on the frame it happens: a second
/// person comes into view (until they have gone for 10 s), the watch moves to another person, the
/// picture is too dark to see anybody. Allocation-free like `LoopEvents`: the numbers in the
/// messages are composed in the logger's buffer and the fields are `LogFields`' stored ones.
struct SceneNotes {
    /// Whether a second person is in view (an episode: it ends after 10 s with one person).
    private var othersInView = false
    private var othersLastSeen = MonotonicInstant.zero
    /// The too-dark episode: since when the picture has been dark with nobody seen, and whether
    /// that was said.
    private var darkSince: MonotonicInstant?
    private var saidTooDark = false

    /// Notes one frame's scene: how many people are in view, whether the watch moved to another
    /// person, the picture's mean brightness and whether a person was found.
    mutating func note(peopleInView: Int, watchMoved: Bool, brightness: Float, personFound: Bool,
                       at timestamp: MonotonicInstant, logger: Logger) {
        notePeople(peopleInView: peopleInView, watchMoved: watchMoved, at: timestamp, logger: logger)
        noteDarkness(brightness: brightness, personFound: personFound, at: timestamp, logger: logger)
    }

    /// Says when a second person comes into view (once until they have gone) and when the watch
    /// moves to another person, so an owner reading the journal knows whose workout it reports.
    private mutating func notePeople(peopleInView: Int, watchMoved: Bool, at timestamp: MonotonicInstant, logger: Logger) {
        if watchMoved {
            logger.log(.notice, LogFields(event: .camera, persons: peopleInView)) { message in
                message.append("now watching another person: the one watched until now stopped exercising while they move (")
                message.append(integer: peopleInView)
                message.append(" people in view)")
            }
        }
        if peopleInView >= 2 { othersLastSeen = timestamp }
        if peopleInView >= 2, !othersInView {
            othersInView = true
            logger.log(.notice, LogFields(event: .camera, persons: peopleInView)) { message in
                message.append(integer: peopleInView)
                message.append(" people in view: watching the one exercising (or the most prominent); the others' movement is not counted")
            }
        } else if peopleInView <= 1, othersInView, (timestamp - othersLastSeen).seconds >= 10 {
            othersInView = false
            logger.info("only the watched person is in view again", LogFields(event: .camera, persons: peopleInView))
        }
    }

    /// Says once per episode when the picture has been too dark to see anybody for 5 s (mean
    /// brightness under 40 of 255 with no person found), and when it is bright enough again
    /// (over 50, so a picture near the limit does not repeat the pair).
    private mutating func noteDarkness(brightness: Float, personFound: Bool, at timestamp: MonotonicInstant, logger: Logger) {
        if brightness < 40, !personFound {
            let since = darkSince ?? timestamp
            darkSince = since
            if !saidTooDark, (timestamp - since).seconds >= 5 {
                saidTooDark = true
                let level = Int(brightness)
                logger.log(.warning, LogFields(event: .camera, brightness: level)) { message in
                    message.append("the picture is too dark to see anybody (mean brightness ")
                    message.append(integer: level)
                    message.append(" of 255): light the room or turn the camera towards the light; 'posewatch snapshot' shows what it sees")
                }
            }
        } else if brightness > 50 || personFound {
            darkSince = nil
            if saidTooDark {
                saidTooDark = false
                let level = Int(brightness)
                logger.log(.info, LogFields(event: .camera, brightness: level)) { message in
                    message.append("the picture is bright enough again (mean brightness ")
                    message.append(integer: level)
                    message.append(" of 255)")
                }
            }
        }
    }
}
