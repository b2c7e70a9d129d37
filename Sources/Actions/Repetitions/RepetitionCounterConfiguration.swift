/// The repetition counter's few parameters. The defaults are the ones measured in
/// `training/counter/` (see its README); the same names appear in the Python prototype.
public struct RepetitionCounterConfiguration: Equatable, Sendable {
    /// The rate poses arrive at (the classifier's model frame rate).
    public var framesPerSecond: Double = 15
    /// The sliding window the motion axis and the thresholds are taken over. It must hold at least
    /// one of the slowest repetitions (0.3 per second ≈ 3.3 s).
    public var windowSeconds: Double = 5
    /// Frames with a pose needed before the first decision (the axis needs some motion to lock on).
    public var warmUpSeconds: Double = 1
    /// On the first decision after a (re)start, run the side logic over the warm-up's frames too, so
    /// repetitions done while the counter was warming up count (credited at most `warmUpSeconds` late).
    public var creditsWarmUp = true
    /// A repetition seen while no exercise is named (`starting_up`, `low_confidence`, `no_person`,
    /// `other`) is kept for the current set and credited, with its own time, when the classifier
    /// names an exercise: its label comes a window (about 2 s) after the movement, so a set's first
    /// repetitions always happen before it, and a brief flicker inside a set would otherwise lose
    /// some. The set ends (its unnamed repetitions are dropped) after this long without a
    /// repetition, when the person leaves (`gapResetSeconds`), or when `other` holds for longer
    /// than `labelLagSeconds`. The slowest repetitions take about 3 s.
    public var setPauseSeconds: Double = 5
    /// How long the classifier's label can lag the movement: `other` held for longer than this
    /// means what it saw before was other movement, and the unnamed repetitions older than this go
    /// (nothing is ever counted for `other`).
    public var labelLagSeconds: Double = 3
    /// A new set of an exercise the rule counts: when its label is named and was not the label at
    /// any time in the last `labelLagSeconds`, the window keeps only its last this-many seconds
    /// (the set's first repetitions: the label comes 1.7–2.3 s after they begin), and the sides and
    /// the axis start afresh over them, replayed at once. Whatever moved before (walking in, another
    /// exercise, a big change of posture) then no longer holds the window's range, which hid a
    /// set's first repetitions for a whole window. Not when a repetition was counted (under any
    /// label) in those last seconds: the replay would count it again, or count the tail of the set
    /// that just ended. Repetitions kept for the set from before those seconds stay kept. 0 turns
    /// it off. Python: `Config.new_set_window_s`
    /// (`docs/history.md`, counter round 20).
    public var newSetWindowSeconds: Double = 3
    /// The labels whose repetitions come from the learned phase net (`RepetitionPhaseNet`) instead
    /// of the motion-axis rule, when the counter has a net (`RepetitionCounter(configuration:phaseNet:)`;
    /// without one every label is counted by the rule). The net's repetitions count for these
    /// labels, are kept for the set while no exercise is named and credited when one of these is
    /// named, as the rule's are; the rule's repetitions of these labels are not counted. Python:
    /// `Config.phase_labels`. Burpees joined squats and jumping jacks when the net counted the
    /// generated sessions' burpees far better than the rule (`docs/history.md`, counter round 16);
    /// push-ups once a net trained on streams that open mid-exercise counted RepCount's real push-ups
    /// and the sessions' far better, and a set's start-up right (round 17). Lunges stay with the rule.
    public var phaseLabels: [ActionLabel] = [.squats, .jumpingJacks, .burpees, .pushUps]
    /// The labels whose motion axis is taken from the joints' vertical positions alone (the
    /// horizontal features are left out of the window while one of them is the label). An
    /// alternating lunge moves the body's box sideways with the leading leg, once per pair of
    /// lunges; that sideways swing outweighed the hips' drop, once per lunge, and the rule counted
    /// about half of them. Python: `Config.vertical_labels` (`docs/history.md`, counter round 19).
    public var verticalLabels: [ActionLabel] = [.lunges]
    /// Hysteresis as a share of the signal's range over the window: "far" above
    /// `maximum − hysteresis·range`, "near" below `minimum + hysteresis·range`, unchanged between.
    public var hysteresis: Float = 0.35
    /// The smallest range (in body sizes) that can count: below it the person is standing still and
    /// what moves is keypoint jitter.
    public var minimumRange: Float = 0.1
    /// Moving-average length (frames) applied to the signal before thresholding, against jitter.
    public var smoothingFrames: Int = 2
    /// The shortest half-repetition (seconds): faster reversals are jitter (2 reps/s → 0.25 s).
    public var minimumHalfSeconds: Double = 0.2
    /// After this long without a usable pose the person has left: the window and the sides reset.
    public var gapResetSeconds: Double = 2
    /// Keypoints scoring below this are treated as missing (held at their last position).
    public var minimumKeypointScore: Float = 0.3
    /// A frame needs at least this many of the 13 body joints above the score to count as a pose.
    public var minimumVisibleJoints: Int = 7
    /// Squats and lunges only: a repetition counts only if the hip's height above the ankles,
    /// measured in shin lengths (`(ankle − hip) / (ankle − knee)`, vertical, mean of both legs; about
    /// 2 standing, 1 at a parallel squat), moved at least this far from its rest value (the median
    /// of the half second up to the last frame on the rest side) before the crossing to the far side. Walking, talking or turning move the motion
    /// signal but not the legs' fold. Vertical ratios do not depend on distance (or on per-axis
    /// scaling). 0 turns the gate off; other actions have no cue and are never gated.
    public var legCueShinLengths: Double = 0.08
    /// A squat or lunge whose legs had not folded enough when it reached the far side still counts
    /// on the frame they do, for at most this long after that and only before the signal is back on
    /// the rest side (a shallow repetition crosses the threshold before its deepest point). 0: until
    /// it is back on the rest side.
    public var legCueDeferSeconds: Double = 1
    /// Squats and lunges only: a repetition counts only if, on the frame it would count, the
    /// shoulders are above the hips (vertically) on at least one side. Both exercises are done
    /// standing up; bending over to pick something up, touching the toes or lying down fold the
    /// legs and move the motion signal just as well, with the hips at or above the shoulders. A
    /// side whose shoulder and hip have not both been seen since the reset gives no cue. The more
    /// upright side decides, so one mislocated hip does not reject a real squat. False turns it off.
    public var requiresUprightTorso = true
    /// A camera zoom or cut: when the body's bones (the median length ratio over the bones whose
    /// joints are confident in both poses, at least 3 of 12) grow or shrink by more than this factor
    /// from one usable pose to the next, and the pose after confirms it against the same earlier
    /// one, the image's coordinate frame has changed: the motion state restarts as for a person
    /// re-entering (held joints and the window's range belong to the old frame). A body cannot
    /// change its own size that fast; per-frame min–max normalised poses (Countix) fake changes
    /// up to 2× when the person lies down or sits up. 0 turns it off.
    public var zoomFactor: Double = 2.5
    /// Before the first decision after a (re)start, a joint seen for the first time restarts the
    /// warm-up: until then it sat at the box centre, so the features before and after it are not
    /// comparable, and the one-frame step would otherwise set the rest side (or be counted, through
    /// the warm-up credit).
    public var restartsWarmUpOnNewJoint = true
    /// A repetition counts when it has ended (the signal back on the rest side), not when it reaches
    /// the far side: its event then comes at its end, not half a repetition early (1.5 s for a 3 s
    /// repetition), and a move that goes out and never comes back is not a repetition. The checks
    /// (torso, legs) are made at the far side as before; the label must be the same at the return.
    /// False: counted on reaching the far side.
    public var countsAtReturn = true
    /// With `countsAtReturn`: a repetition waiting on the far side also counts once the signal has
    /// kept still there for this long (moved less than `stillShare` of the range): the last
    /// repetition of a set that ends on the far side (a set begun mid-repetition takes its rest side
    /// the other way round). 0 turns it off.
    public var stillSeconds: Double = 1
    /// The share of the window's range the signal may move and still be "still" (`stillSeconds`).
    public var stillShare: Double = 0.1

    public init() {}

    /// The window length in frames.
    public var windowFrames: Int { max(4, Int((windowSeconds * framesPerSecond).rounded())) }
    /// The `stillSeconds` span in frames (at least 2).
    public var stillFrames: Int { max(2, Int((stillSeconds * framesPerSecond).rounded())) }
    /// The warm-up length in frames.
    public var warmUpFrames: Int { max(3, Int((warmUpSeconds * framesPerSecond).rounded())) }
}
