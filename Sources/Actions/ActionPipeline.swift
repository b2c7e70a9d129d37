import PoseEstimation

/// Settings for the part of the pipeline after the pose model.
public struct ActionPipelineSettings: Sendable {
    /// Joints the window and counter see. All by default: the classifier was trained and the figures
    /// in the README measured with every joint; `[.arms, .torso, .legs]` drops the face (talking and
    /// head turns are not exercise) for an owner who wants that.
    public var joints: JointSelection = .all
    /// One Euro smoothing of keypoints before the window and counter (nil: off).
    public var smoothing: KeypointSmoother? = nil
    /// Overrides for the decision rules (nil: the model's metadata defaults).
    public var confidenceThreshold: Float? = nil
    public var minimumPresentShare: Double? = nil
    /// Decisions in a row a new label needs before it is reported (the config's `classifier.smoothing`).
    public var confirmations: Int? = nil
    /// Replay's `--action`: report this action on every decision and skip the classifier.
    public var fixedAction: ActionLabel? = nil

    public init() {}
}

/// What happened on one frame.
public struct ActionPipelineStep: Sendable {
    /// A decision made on this frame (every `stride` slots), nil otherwise.
    public var decision: ActionDecision?
    /// The session numbers of the repetitions counted on this frame (`counter.event(number:)`
    /// reads each until the next frame): usually none or one, several when a set's first
    /// repetitions are credited as the classifier names the exercise.
    public var repetitions: Range<Int> = 0..<0
    /// Set when a decision was due on this frame and the classifier failed on the window (a
    /// damaged model file): no decision is made, the reported one stays as it was.
    public var classifierFailure: ClassifierModelError?
}

/// The stages after the pose model, shared by the live loop and `replay` so both behave the same:
/// person selection → (smoothing, joint selection) → time-aligned window → classifier every
/// `stride` slots → decision rules → repetition counter → summary. Allocation-free per frame.
public struct ActionPipeline: ~Copyable {
    public let classifier: ActionClassifier
    public private(set) var window: PoseWindow
    public private(set) var tracker = PersonTracker()
    public private(set) var policy: DecisionPolicy
    public let counter: RepetitionCounter
    public private(set) var summary = ActionSummary()
    public private(set) var settings: ActionPipelineSettings
    /// The decision reported last (what the LEDs show).
    public private(set) var currentDecision: ActionDecision = .startingUp
    /// Frames given to the pipeline and how many had a person.
    public private(set) var frames = 0
    public private(set) var framesWithPerson = 0

    private var smoother: KeypointSmoother?
    private var slotsSinceDecision = 0
    private let decisionSeconds: Double

    public init(classifier: consuming ActionClassifier, counter: RepetitionCounter = RepetitionCounter(), settings: ActionPipelineSettings = ActionPipelineSettings()) {
        let metadata = classifier.metadata
        window = PoseWindow(length: metadata.windowLength, rate: metadata.frameRate)
        policy = DecisionPolicy(labelCount: metadata.labels.count)
        Self.configure(&policy, with: settings, metadata: metadata)
        decisionSeconds = Double(metadata.stride) / metadata.framesPerSecond
        smoother = settings.smoothing
        self.counter = counter
        self.settings = settings
        self.classifier = classifier
    }

    /// Applies new decision rules and keypoint smoothing in place (the live loop's SIGHUP): the
    /// window, the tracked person, the counts and the summary carry on. A changed smoother starts
    /// afresh; joints and the fixed action stay as they were built.
    public mutating func update(_ newSettings: ActionPipelineSettings) {
        Self.configure(&policy, with: newSettings, metadata: classifier.metadata)
        let old = settings.smoothing, new = newSettings.smoothing
        if old?.minimumCutoff != new?.minimumCutoff || old?.beta != new?.beta { smoother = new }
        settings.confidenceThreshold = newSettings.confidenceThreshold
        settings.minimumPresentShare = newSettings.minimumPresentShare
        settings.confirmations = newSettings.confirmations
        settings.smoothing = newSettings.smoothing
    }

    private static func configure(_ policy: inout DecisionPolicy, with settings: ActionPipelineSettings,
                                  metadata: ClassifierMetadata) {
        policy.confidenceThreshold = settings.confidenceThreshold ?? metadata.lowConfidenceThreshold
        policy.minimumPresentShare = settings.minimumPresentShare ?? metadata.noPersonMinimumRealFraction
        if let confirmations = settings.confirmations { policy.confirmations = max(1, confirmations) }
    }

    /// The model frame rate (what the camera is asked for).
    public var framesPerSecond: Double { classifier.metadata.framesPerSecond }

    /// Feeds one frame's pose candidates (MoveNet SinglePose: zero or one) seen at `time` seconds.
    public mutating func process<Candidates: Collection>(_ candidates: Candidates, at time: Double) -> ActionPipelineStep
    where Candidates.Element == Pose {
        frames += 1
        var pose = tracker.select(from: candidates, at: time)
        if let tracked = pose {
            framesWithPerson += 1
            var refined = settings.joints.apply(to: tracked)
            if smoother != nil { refined = smoother!.smooth(refined, at: time, track: tracker.trackIdentifier) }
            pose = refined
        }
        var step = ActionPipelineStep()
        let opened = window.add(pose, at: time)
        slotsSinceDecision += opened
        if slotsSinceDecision >= classifier.metadata.stride {
            slotsSinceDecision = 0
            do {
                let decision = try decide()
                currentDecision = decision
                summary.record(decision, duration: decisionSeconds)
                step.decision = decision
            } catch {
                // The run of decisions a history model was trained on is broken here.
                classifier.clearHistory()
                step.classifierFailure = error
            }
        }
        // A fixed action holds from the first frame: the classifier, whose window must fill before
        // its first label, is bypassed, so nothing is lost to its start-up.
        step.repetitions = counter.process(timestamp: time, pose: pose, action: settings.fixedAction ?? currentDecision.action)
        for number in step.repetitions {
            let repetition = counter.event(number: number)
            summary.recordRepetition(repetition.label, count: repetition.count)
        }
        return step
    }

    /// Single-person convenience.
    public mutating func process(_ pose: Pose?, at time: Double) -> ActionPipelineStep {
        if let pose { return process(CollectionOfOne(pose), at: time) }
        return process(EmptyCollection<Pose>(), at: time)
    }

    private mutating func decide() throws(ClassifierModelError) -> ActionDecision {
        let presentShare = Double(window.presentCount) / Double(window.length)
        if let fixed = settings.fixedAction {
            return .action(fixed, confidence: 1)
        }
        guard window.isFull, presentShare >= policy.minimumPresentShare else {
            // A history model's earlier decisions end here: a window that is not classified
            // (starting up, no person) breaks the run the model was trained on (training/README.md).
            classifier.clearHistory()
            return policy.decide(windowFull: window.isFull, presentShare: presentShare,
                                 probabilities: UnsafeBufferPointer(start: nil, count: 0), labels: classifier.metadata.labels)
        }
        let probabilities = try classifier.classify(window)
        return policy.decide(windowFull: true, presentShare: presentShare, probabilities: probabilities, labels: classifier.metadata.labels)
    }
}
