/// Everyone the pose stage has found in view, and which one of them it watches.
///
/// MoveNet SinglePose reports one person per look and picks whom it likes. With a second person in
/// the room it would follow either, and their movement would reach the classifier and the counter.
/// So the pose stage keeps this register:
///
/// - **the watched person**: the box of the pose it follows, updated on every frame it is seen;
/// - **the others**: people found by a *search*, a second look at the whole frame with the watched
///   person blacked out, made every `searchInterval` frames while someone is watched (so it costs
///   1/`searchInterval` more pose invokes), and forgotten when a search has not found them for
///   `forgetSeconds`.
///
/// The others are blacked out of the watched person's crop, so MoveNet there sees only the watched
/// person; a pose that is nevertheless someone else's is refused (`isWatched`).
///
/// Whom to watch: the first person found, unless within `settleSeconds` of starting to watch
/// someone a search finds a person `prominenceRatio` times larger (the "most prominent person" of
/// Apple's sample). Later the watch moves only when the watched person has not been doing one of
/// the exercises for `idleSeconds` (the action stage says so through `watchedExercises`) while
/// another person moves like someone exercising, and never within `graceSeconds` of the watch
/// starting (the classifier needs a window and a few decisions to name anything): it never moves
/// while the watched person keeps exercising. Movement is measured from the others' boxes at
/// search times: the spread of the box's height, width and vertical centre over the last
/// `activitySeconds`, relative to its mean height.
///
/// Fixed capacity (`capacity` others), its storage owned here; nothing allocates after init.
public struct PeopleInView: ~Copyable {
    /// How often, in frames, a search looks for other people while someone is watched.
    public var searchInterval = 5
    /// A person not found again for this long is forgotten (seconds).
    public var forgetSeconds = 2.0
    /// Boxes grow by this fraction of their longer side each way before blacking out (people move
    /// between searches; MoveNet's box is the joints', not the body's outline).
    public var maskMargin: Float = 0.15
    /// While the watch is this young (seconds), a much larger person found takes it over.
    public var settleSeconds = 3.0
    /// How much larger that person must be, by the longer side of their box (the body's length,
    /// standing or lying: a box's area would favour someone standing over someone in a plank).
    public var prominenceRatio: Float = 1.3
    /// Activity at or above this is "moving like someone exercising" (the box's spread relative
    /// to its height).
    public var activeActivity: Float = 0.06
    /// How long the watched person must have done none of the exercises before someone moving
    /// takes over (seconds).
    public var idleSeconds = 4.0
    /// A new watch is kept at least this long (seconds).
    public var graceSeconds = 6.0
    /// The span over which activity is measured (seconds).
    public var activitySeconds = 4.0

    /// Most other people kept at once.
    public static let capacity = 4
    /// Box samples kept per person (at a search every 5 frames of 15 fps, 4 s are 12).
    static let sampleCapacity = 16
    /// Everyone's slot: the watched person's and the others'.
    public static let slotCount = capacity + 1

    /// One person as the register knows them.
    public struct Person: Sendable {
        /// Their box at the last sighting, in frame pixels.
        public var box = BoundingBox(minX: 0, minY: 0, maxX: 0, maxY: 0)
        public var firstSeen = 0.0
        public var lastSeen = 0.0
        /// When the action stage last named this person's movement one of the exercises.
        public var lastExercising = -Double.infinity
        /// In view (an unused slot is not).
        public var isPresent = false
        /// How many searches have found this person. One sighting is not yet a person: MoveNet
        /// now and then places a pose on a dark, noisy or empty patch, rarely twice in a row at
        /// the same place.
        public var sightings = 0
        /// Found by at least two searches (the watched person always counts).
        public var isConfirmed: Bool { isPresent && sightings >= 2 }
        var sampleCount = 0
        var nextSample = 0

        init() {}

        /// Someone first seen at `box` at `time`: present, one sighting, no samples yet.
        init(firstSeenAt box: BoundingBox, time: Double) {
            self.box = box
            firstSeen = time
            lastSeen = time
            isPresent = true
            sightings = 1
        }
    }

    private let persons: UnsafeMutableBufferPointer<Person>
    /// Each slot's boxes at search times (a ring of `sampleCapacity` per slot), for activity.
    private let sampleBoxes: UnsafeMutableBufferPointer<BoundingBox>
    private let sampleTimes: UnsafeMutableBufferPointer<Double>
    /// The watched person's slot, or nil when nobody is watched.
    private var watchedSlot: Int?
    /// Increases each time the watch moves to another person or starts anew.
    public private(set) var watchIdentifier = 0
    private var framesSinceSearch = 0
    /// Whether the watch began with nobody watched (the prominence rule applies) rather than by
    /// moving from someone else.
    private var watchBeganAfresh = false

    public init() {
        persons = .allocate(capacity: Self.slotCount)
        persons.initialize(repeating: Person())
        sampleBoxes = .allocate(capacity: Self.slotCount * Self.sampleCapacity)
        sampleBoxes.initialize(repeating: BoundingBox(minX: 0, minY: 0, maxX: 0, maxY: 0))
        sampleTimes = .allocate(capacity: Self.slotCount * Self.sampleCapacity)
        sampleTimes.initialize(repeating: 0)
    }

    deinit {
        persons.deallocate()
        sampleBoxes.deallocate()
        sampleTimes.deallocate()
    }

    /// The watched person, or nil.
    public var watched: Person? { watchedSlot.map { persons[$0] } }

    /// The other person in `slot` (0..<`slotCount`), or nil when the slot is empty or the
    /// watched person's.
    public func otherPerson(in slot: Int) -> Person? {
        slot != watchedSlot && persons[slot].isConfirmed ? persons[slot] : nil
    }

    private mutating func sample(_ slot: Int, at time: Double) {
        let base = slot * Self.sampleCapacity
        sampleBoxes[base + persons[slot].nextSample] = persons[slot].box
        sampleTimes[base + persons[slot].nextSample] = time
        persons[slot].nextSample = (persons[slot].nextSample + 1) % Self.sampleCapacity
        persons[slot].sampleCount = min(persons[slot].sampleCount + 1, Self.sampleCapacity)
    }

    /// The spread of height, width and vertical centre of `slot`'s boxes since `since`, relative
    /// to the mean height; nil with fewer than 4 samples or less than ¾ of `span` seconds of them.
    func activity(of slot: Int, since: Double, span: Double) -> Float? {
        var count: Float = 0, earliest = Double.infinity, latest = -Double.infinity
        var sumH: Float = 0, sumW: Float = 0, sumY: Float = 0
        var squareH: Float = 0, squareW: Float = 0, squareY: Float = 0
        let base = slot * Self.sampleCapacity
        for index in base..<(base + persons[slot].sampleCount) where sampleTimes[index] >= since {
            let box = sampleBoxes[index]
            let centreY = (box.minY + box.maxY) / 2
            count += 1
            sumH += box.height; squareH += box.height * box.height
            sumW += box.width; squareW += box.width * box.width
            sumY += centreY; squareY += centreY * centreY
            earliest = min(earliest, sampleTimes[index])
            latest = max(latest, sampleTimes[index])
        }
        guard count >= 4, latest - earliest >= span * 0.75 else { return nil }
        func deviation(_ sum: Float, _ square: Float) -> Float {
            max(0, square / count - (sum / count) * (sum / count)).squareRoot()
        }
        let meanHeight = max(sumH / count, 1)
        return (deviation(sumH, squareH) + deviation(sumW, squareW) + deviation(sumY, squareY)) / meanHeight
    }

    /// People in view now: the watched person (when seen within `forgetSeconds`) and the others.
    public func count(at time: Double) -> Int {
        var count = 0
        for slot in 0..<Self.slotCount where persons[slot].isPresent {
            if slot == watchedSlot ? time - persons[slot].lastSeen <= forgetSeconds : persons[slot].isConfirmed { count += 1 }
        }
        return count
    }

    /// Whether this frame should also be searched for other people.
    public mutating func wantsSearch() -> Bool {
        guard watchedSlot != nil else { framesSinceSearch = 0; return false }
        framesSinceSearch += 1
        guard framesSinceSearch >= searchInterval else { return false }
        framesSinceSearch = 0
        return true
    }

    /// Whether `box` is the watched person (or, with nobody watched, anyone). A pose that is not
    /// is someone else whom MoveNet looked at despite the blacked-out others.
    public func isWatched(_ box: BoundingBox) -> Bool {
        guard let watchedSlot else { return true }
        let likeWatched = box.samePersonSimilarity(to: persons[watchedSlot].box)
        guard likeWatched > 0 else { return false }
        for slot in 0..<Self.slotCount where slot != watchedSlot && persons[slot].isConfirmed
            && box.samePersonSimilarity(to: persons[slot].box) > likeWatched {
            return false
        }
        return true
    }

    /// Records the watched person's pose box on this frame (nil: not seen). Starts a watch when
    /// nobody is watched; ends it when the watched person has not been seen for `forgetSeconds`.
    public mutating func watchedSeen(_ box: BoundingBox?, at time: Double) {
        if let box {
            if let watchedSlot {
                persons[watchedSlot].box = box
                persons[watchedSlot].lastSeen = time
            } else {
                forgetOthers(overlapping: box)
                let slot = freeSlot()
                persons[slot] = Person(firstSeenAt: box, time: time)
                watchedSlot = slot
                watchIdentifier += 1
                watchBeganAfresh = true
            }
        } else if let watchedSlot, time - persons[watchedSlot].lastSeen > forgetSeconds {
            persons[watchedSlot].isPresent = false
            self.watchedSlot = nil
        }
        for slot in 0..<Self.slotCount where slot != watchedSlot && persons[slot].isPresent
            && time - persons[slot].lastSeen > forgetSeconds {
            persons[slot].isPresent = false
        }
    }

    /// What the action stage makes of the watched person's movement at `time`: one of the
    /// exercises, or not (other, low confidence, nobody, still starting).
    public mutating func watchedExercises(_ exercising: Bool, at time: Double) {
        if exercising, let watchedSlot { persons[watchedSlot].lastExercising = time }
    }

    /// What one search found (nil: nobody besides the watched person) at `time`. Returns true
    /// when the watch moved to another person (the caller looks for them afresh).
    @discardableResult
    public mutating func searched(found box: BoundingBox?, at time: Double) -> Bool {
        guard let watchedSlot else { return false }
        if let box, box.intersectionOverUnion(persons[watchedSlot].box) < 0.3 {
            // The same person as an earlier search found, or somebody new.
            var match: Int?
            var best: Float = 0
            for slot in 0..<Self.slotCount where slot != watchedSlot && persons[slot].isPresent {
                let similarity = box.samePersonSimilarity(to: persons[slot].box)
                if similarity > best { best = similarity; match = slot }
            }
            if let match {
                persons[match].box = box
                persons[match].lastSeen = time
                // Not `+=`: an inout access to a buffer element crashes Swift 6.0.3's SILGen when
                // compiling for ThreadSanitizer, which the process-spawning suites run under.
                persons[match].sightings = persons[match].sightings + 1
            } else {
                persons[freeSlot()] = Person(firstSeenAt: box, time: time)
            }
        }
        // Everyone present is sampled at the same moments, so their activities compare.
        for slot in 0..<Self.slotCount where persons[slot].isPresent { sample(slot, at: time) }
        return considerSwitch(at: time)
    }

    /// Moves the watch when someone else should be watched (see the type's description).
    private mutating func considerSwitch(at time: Double) -> Bool {
        guard let watchedSlot else { return false }
        let current = persons[watchedSlot]
        var choice: Int?
        if watchBeganAfresh, time - current.firstSeen <= settleSeconds {
            var largest = Self.length(current.box) * prominenceRatio
            for slot in 0..<Self.slotCount where slot != watchedSlot && persons[slot].isConfirmed
                && persons[slot].lastSeen == time && Self.length(persons[slot].box) >= largest {
                largest = Self.length(persons[slot].box)
                choice = slot
            }
        } else if time - current.firstSeen >= graceSeconds, time - current.lastExercising >= idleSeconds {
            var most = activeActivity
            for slot in 0..<Self.slotCount where slot != watchedSlot && persons[slot].isConfirmed {
                guard let activity = activity(of: slot, since: time - activitySeconds, span: activitySeconds),
                      activity >= most else { continue }
                most = activity
                choice = slot
            }
        }
        guard let choice else { return false }
        // The person watched until now is certainly a person: blacked out from the next frame on.
        persons[watchedSlot].sightings = max(persons[watchedSlot].sightings, 2)
        self.watchedSlot = choice
        persons[choice].firstSeen = time
        persons[choice].lastExercising = -.infinity
        watchBeganAfresh = false
        watchIdentifier += 1
        return true
    }

    /// Forgets everybody (a new camera mode, a rotated picture).
    public mutating func reset() {
        watchedSlot = nil
        for slot in 0..<Self.slotCount { persons[slot].isPresent = false }
        framesSinceSearch = 0
    }

    private mutating func forgetOthers(overlapping box: BoundingBox) {
        for slot in 0..<Self.slotCount where persons[slot].isPresent && box.intersectionOverUnion(persons[slot].box) >= 0.3 {
            persons[slot].isPresent = false
        }
    }

    /// A slot not in use, else the other person seen longest ago.
    private func freeSlot() -> Int {
        var oldest: Int?
        for slot in 0..<Self.slotCount where slot != watchedSlot {
            if !persons[slot].isPresent { return slot }
            if oldest == nil || persons[slot].lastSeen < persons[oldest!].lastSeen { oldest = slot }
        }
        return oldest!
    }

    /// A person's length in the picture: the longer side of their box.
    static func length(_ box: BoundingBox) -> Float { max(box.width, box.height) }

    /// The box grown by `maskMargin` of its longer side each way.
    public func grown(_ box: BoundingBox) -> BoundingBox {
        let margin = max(box.width, box.height) * maskMargin
        return BoundingBox(minX: box.minX - margin, minY: box.minY - margin, maxX: box.maxX + margin, maxY: box.maxY + margin)
    }

    /// The part of another person's grown box to black out of the watched person's crop: the
    /// grown box, cut back on the side facing the watched person so none of the watched person's
    /// own grown box is covered (nil when nothing of it is left).
    public func maskRectangle(forOther other: BoundingBox) -> BoundingBox? {
        var mask = grown(other)
        guard let watchedSlot else { return mask }
        let watched = persons[watchedSlot]
        let keep = grown(watched.box)
        let overlapX = min(mask.maxX, keep.maxX) - max(mask.minX, keep.minX)
        let overlapY = min(mask.maxY, keep.maxY) - max(mask.minY, keep.minY)
        guard overlapX > 0, overlapY > 0 else { return mask }
        let dx = (other.minX + other.maxX - watched.box.minX - watched.box.maxX) / 2
        let dy = (other.minY + other.maxY - watched.box.minY - watched.box.maxY) / 2
        if abs(dx) >= abs(dy) {
            if dx < 0 { mask.maxX = min(mask.maxX, keep.minX) } else { mask.minX = max(mask.minX, keep.maxX) }
        } else {
            if dy < 0 { mask.maxY = min(mask.maxY, keep.minY) } else { mask.minY = max(mask.minY, keep.maxY) }
        }
        return mask.width > 0 && mask.height > 0 ? mask : nil
    }
}

