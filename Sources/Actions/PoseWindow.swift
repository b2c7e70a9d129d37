import LinuxSystem
import PoseEstimation

/// The last `length` poses sampled at the action model's frame rate, filled by timestamp.
///
/// Each pose lands in the slot its timestamp falls in (slot = round((t − t₀) × fps)); slots that no
/// frame reached (the camera dropped it, inference was late) hold an empty pose, the way Apple's
/// sample fills `nil` with an empty multiarray. So the classifier always sees poses spaced as it
/// was trained on, however the frames arrived. Storage is fixed at start-up (no allocation after).
public struct PoseWindow: Sendable {
    /// Slots in the window (the model's window length).
    public let length: Int
    /// The sampling rate, frames per second.
    public let framesPerSecond: Double

    private var poses: [Pose]
    private var present: [Bool]
    /// Ring index of the newest slot.
    private var newest = -1
    /// Slot number (since the first pose) of the newest slot.
    private var newestSlot: Int64 = -1
    private var origin: Double?
    /// Slot numbers stay below 2⁵³ (exact in a Double, far inside Int64): at 240 fps that is over
    /// a million years.
    static let slotLimit = 9_007_199_254_740_992.0

    /// Slots filled since the start (or the last reset), saturating at `length`.
    public private(set) var filledSlots = 0

    /// A window of `length` slots (at least 1) sampled at `rate`.
    public init(length: Int, rate: FrameRate) {
        // The length is the classifier's window (its metadata allows 1...1000); never below 1 so
        // the ring arithmetic is defined even if a caller passes less.
        self.length = Swift.max(1, length)
        self.framesPerSecond = rate.framesPerSecond
        poses = [Pose](repeating: Pose(), count: self.length)
        present = [Bool](repeating: false, count: self.length)
    }

    /// A window of `length` slots at `framesPerSecond`; nil when the length is below 1 or the rate
    /// is not a `FrameRate` (NaN, infinite, outside `FrameRate.supported`).
    public init?(length: Int, framesPerSecond: Double) {
        guard length > 0, let rate = FrameRate(framesPerSecond: framesPerSecond) else { return nil }
        self.init(length: length, rate: rate)
    }

    /// Whether every slot has been reached at least once since the start.
    public var isFull: Bool { filledSlots >= length }

    /// How many slots currently hold a real pose.
    public var presentCount: Int { present.reduce(0) { $0 + ($1 ? 1 : 0) } }

    /// The slot number of the newest slot (since the first frame), -1 before any.
    public var newestSlotNumber: Int64 { newestSlot }

    /// Adds the pose (or nil: nobody) seen at `time` seconds. Returns how many new slots were
    /// opened (0 when the frame fell into the newest slot again, which keeps the newer pose).
    @discardableResult
    public mutating func add(_ pose: Pose?, at time: Double) -> Int {
        // A time that is not a finite number cannot be placed: the frame is dropped.
        guard time.isFinite else { return 0 }
        if origin == nil { origin = time }
        let offset = ((time - origin!) * framesPerSecond).rounded()
        if offset >= Self.slotLimit {
            // Too far after the first frame to number (a replay at a tiny --fps, a clock jump):
            // nothing in the window is recent any more, so start afresh as after a camera restart.
            reset()
            return add(pose, at: time)
        }
        // Far enough back not to fit is older than every slot, like any clock step back.
        let slot = offset <= -Self.slotLimit ? Int64.min : Int64(offset)
        if newestSlot >= 0 && slot <= newestSlot {
            // Same slot again (camera faster than the model rate) or clock step back: newest wins.
            if slot == newestSlot { store(pose, at: newest) }
            return 0
        }
        let advance = newestSlot < 0 ? 1 : Int(min(slot - newestSlot, Int64(length) + 1))
        // Slots between the previous frame and this one were missed: empty poses.
        for _ in 0..<(advance - 1) {
            newest = (newest + 1) % length
            store(nil, at: newest)
        }
        newest = (newest + 1) % length
        store(pose, at: newest)
        newestSlot = slot
        filledSlots = min(length, filledSlots + advance)
        return advance
    }

    /// Forgets everything (a new session or a camera restart).
    public mutating func reset() {
        for index in 0..<length { present[index] = false; poses[index] = Pose() }
        newest = -1
        newestSlot = -1
        origin = nil
        filledSlots = 0
    }

    /// Calls `body` with each slot from oldest to newest: the pose (empty when absent) and whether
    /// it is real.
    public func forEachSlot(_ body: (Pose, Bool) -> Void) {
        for offset in 1...length {
            let index = (newest + offset) % length
            body(poses[index], present[index])
        }
    }

    private mutating func store(_ pose: Pose?, at index: Int) {
        poses[index] = pose ?? Pose()
        present[index] = pose != nil
    }
}
