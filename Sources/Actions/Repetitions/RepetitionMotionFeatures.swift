import PoseEstimation

/// The motion rule's first step (`RepetitionMotionRule`): a usable pose becomes 26 numbers that do
/// not depend on where the person stands, how large they appear, or which side the detector calls
/// left, plus the two cues the squat/lunge checks read.
///
/// Takes: poses, one at a time. Gives: the feature row (the body joints centred on their box and
/// scaled by its larger side: the nose, the midpoint of each left/right pair and the absolute
/// left/right difference of each pair), the hips' height above the ankles in shin lengths and the
/// torso's height; and whether the camera zoomed or cut (the body's bones `zoomFactor` times larger
/// or smaller from one pose to the next, confirmed by the pose after). Mirror-invariance matters:
/// detectors swap sides, and an alternating lunge is one repetition per leg, not one per pair.
/// Missing joints hold their last confident position. Allocation-free after `init`. Python:
/// `MotionRule.features` (training/counter/counter_rule.py).
final class RepetitionMotionFeatures {
    /// Numbers per pose: nose (2) + six pair midpoints (12) + six pair differences (12).
    static let count = 26

    /// The six left/right pairs after the nose: shoulders, elbows, wrists, hips, knees, ankles. In
    /// COCO order each pair is adjacent, left first, starting at the left shoulder.
    private static let pairCount = 6
    @inline(__always)
    private static func leftJoint(_ pair: Int) -> Int { Joint.leftShoulder.rawValue + 2 * pair }
    /// Bit mask of the 13 body joints (all but eyes and ears, which move with the head and which
    /// annotated sets such as Penn Action do not have).
    static let bodyMask: UInt32 = {
        var mask: UInt32 = 1 << UInt32(Joint.nose.rawValue)
        for joint in Joint.leftShoulder.rawValue...Joint.rightAnkle.rawValue { mask |= 1 << UInt32(joint) }
        return mask
    }()

    /// Bit mask of both hips, knees and ankles (the leg cue's joints).
    private static let legMask: UInt32 = {
        var mask: UInt32 = 0
        for joint in Joint.leftHip.rawValue...Joint.rightAnkle.rawValue { mask |= 1 << UInt32(joint) }
        return mask
    }()

    /// Shoulders, hips, both sides of the torso, upper arms, forearms, thighs, shins.
    private static let bones: [(Int, Int)] = [(5, 6), (11, 12), (5, 11), (6, 12), (5, 7), (7, 9), (6, 8), (8, 10),
                                              (11, 13), (13, 15), (12, 14), (14, 16)]

    private let configuration: RepetitionCounterConfiguration
    /// Every joint's last confident position, and which joints have one since the last `forget`.
    private var heldPose = Pose()
    private(set) var seenJoints: UInt32 = 0
    /// The raw positions of the last two usable poses (oldest first) and whose joints were confident,
    /// for the zoom check; `scaleHistoryCount` of them are valid.
    private var scaleHistory = (Pose(), Pose())
    private var scaleHistoryMasks: (UInt32, UInt32) = (0, 0)
    private var scaleHistoryCount = 0
    /// Scratch for the median of the bone length ratios (at most 12).
    private let boneRatios: UnsafeMutablePointer<Double>

    init(configuration: RepetitionCounterConfiguration) {
        self.configuration = configuration
        boneRatios = .allocate(capacity: Self.bones.count)
        boneRatios.initialize(repeating: 0, count: Self.bones.count)
    }

    deinit {
        boneRatios.deallocate()
    }

    /// The held joints and the zoom history go (a person re-entering).
    func forget() {
        scaleHistoryCount = 0
        seenJoints = 0
    }

    /// The confident joints of `pose` (bit per joint), or nil when it is not usable: a frame with
    /// only a few confident body joints is a person half out of frame or a false detection.
    func confidentJoints(of pose: Pose) -> UInt32? {
        let minimumScore = configuration.minimumKeypointScore
        var visible = 0
        for joint in 0..<Joint.count where Self.bodyMask & (1 << UInt32(joint)) != 0 {
            if pose[joint].score >= minimumScore { visible += 1 }
        }
        guard visible >= configuration.minimumVisibleJoints else { return nil }
        var confident: UInt32 = 0
        for joint in 0..<Joint.count where pose[joint].score >= minimumScore { confident |= 1 << UInt32(joint) }
        return confident
    }

    /// Whether `confident` holds a body joint not seen since the last `forget` (some were).
    func seesNewJoint(_ confident: UInt32) -> Bool {
        seenJoints != 0 && confident & Self.bodyMask & ~seenJoints != 0
    }

    /// After a zoom's `forget`: the zoom history starts from this pose.
    func restartScaleHistory(with pose: Pose, confident: UInt32) {
        scaleHistory.1 = pose
        scaleHistoryMasks.1 = confident
        scaleHistoryCount = 1
    }

    /// Holds the confident joints of `pose` and writes its features into `row` (`count` floats).
    /// Returns the hips' height above the ankles in shin lengths (NaN until hips, knees and ankles
    /// have all been seen) and the torso's height: the larger over both sides (each whose shoulder
    /// and hip have been seen) of the hip's depth below the shoulder, in box sizes (NaN: none seen).
    func hold(_ pose: Pose, writingInto row: UnsafeMutablePointer<Float>) -> (legHeight: Double, torsoHeight: Double) {
        let minimumScore = configuration.minimumKeypointScore
        for joint in 0..<Joint.count where Self.bodyMask & (1 << UInt32(joint)) != 0 {
            let point = pose[joint]
            if point.score >= minimumScore {
                heldPose[joint] = point
                seenJoints |= 1 << UInt32(joint)
            }
        }
        // The box of every joint with a known position (confident now or held from before).
        var minX = Float.infinity, minY = Float.infinity, maxX = -Float.infinity, maxY = -Float.infinity
        for joint in 0..<Joint.count where seenJoints & (1 << UInt32(joint)) != 0 {
            let point = heldPose[joint]
            minX = min(minX, point.x); maxX = max(maxX, point.x)
            minY = min(minY, point.y); maxY = max(maxY, point.y)
        }
        let centreX = (minX + maxX) / 2, centreY = (minY + maxY) / 2
        let scale = 1 / max(max(maxX - minX, maxY - minY), 1e-6)  // two-argument max: the variadic one allocates
        let nose = normalised(Joint.nose.rawValue, centreX: centreX, centreY: centreY, scale: scale)
        row[0] = nose.x
        row[1] = nose.y
        for index in 0..<Self.pairCount {
            let left = normalised(Self.leftJoint(index), centreX: centreX, centreY: centreY, scale: scale)
            let right = normalised(Self.leftJoint(index) + 1, centreX: centreX, centreY: centreY, scale: scale)
            row[2 + 2 * index] = (left.x + right.x) / 2
            row[3 + 2 * index] = (left.y + right.y) / 2
            row[14 + 2 * index] = abs(left.x - right.x)
            row[15 + 2 * index] = abs(left.y - right.y)
        }
        // The leg cue: hip height above the ankles in shin lengths, per leg (a shin foreshortened
        // below 0.02 box sizes counts as 0.02; the ratio is capped at 5 against such near-zero shins).
        let left = hipHeight(hip: Joint.leftHip.rawValue, centreX: centreX, centreY: centreY, scale: scale)
        let right = hipHeight(hip: Joint.rightHip.rawValue, centreX: centreX, centreY: centreY, scale: scale)
        // Unknown (NaN) until hips, knees and ankles have all been seen since the reset: a camera
        // that cuts the feet off gives no cue, and then the gate does not apply.
        let legHeight = seenJoints & Self.legMask == Self.legMask ? (left + right) / 2 : .nan
        // The upright-torso cue: how far the hips are below the shoulders, on the more upright side
        // (one side's hip lost or mislocated does not hide an upright torso).
        var torso = Double.nan
        for sideIndex in 0..<2 {  // a range, not an array literal: nothing is allocated
            let shoulder = Joint.leftShoulder.rawValue + sideIndex
            let hip = Joint.leftHip.rawValue + sideIndex
            let bits: UInt32 = (1 << UInt32(shoulder)) | (1 << UInt32(hip))
            guard seenJoints & bits == bits else { continue }
            let depth = Double(normalised(hip, centreX: centreX, centreY: centreY, scale: scale).y
                - normalised(shoulder, centreX: centreX, centreY: centreY, scale: scale).y)
            torso = torso.isNaN ? depth : max(torso, depth)
        }
        return (legHeight, torso)
    }

    /// A held joint relative to the box, in box sizes. A joint never seen since the reset sits at the
    /// box centre: constant, so it adds no variance and cannot steer the axis.
    @inline(__always)
    private func normalised(_ joint: Int, centreX: Float, centreY: Float, scale: Float) -> (x: Float, y: Float) {
        guard seenJoints & (1 << UInt32(joint)) != 0 else { return (0, 0) }
        let point = heldPose[joint]
        return ((point.x - centreX) * scale, (point.y - centreY) * scale)
    }

    /// One leg's hip height above its ankle in shin lengths (COCO: the knee and ankle follow the hip
    /// two and four places on).
    @inline(__always)
    private func hipHeight(hip: Int, centreX: Float, centreY: Float, scale: Float) -> Double {
        let hipY = normalised(hip, centreX: centreX, centreY: centreY, scale: scale).y
        let kneeY = normalised(hip + 2, centreX: centreX, centreY: centreY, scale: scale).y
        let ankleY = normalised(hip + 4, centreX: centreX, centreY: centreY, scale: scale).y
        let shin = max(Double(ankleY - kneeY), 0.02)
        return min(max(Double(ankleY - hipY) / shin, 0), 5)
    }

    /// Pushes this usable pose into the zoom history and says whether the two newest poses are both
    /// more than `zoomFactor` larger (or smaller) than the oldest: a one-frame detection glitch
    /// is not confirmed by the next pose, a zoom is.
    func scaleChanged(_ pose: Pose, confident: UInt32) -> Bool {
        if scaleHistoryCount < 2 {
            if scaleHistoryCount == 0 {
                scaleHistory.0 = pose
                scaleHistoryMasks.0 = confident
            } else {
                scaleHistory.1 = pose
                scaleHistoryMasks.1 = confident
            }
            scaleHistoryCount += 1
            return false
        }
        let factor = configuration.zoomFactor
        let newest = boneRatio(pose, confident, scaleHistory.0, scaleHistoryMasks.0)
        let middle = boneRatio(scaleHistory.1, scaleHistoryMasks.1, scaleHistory.0, scaleHistoryMasks.0)
        scaleHistory.0 = scaleHistory.1
        scaleHistoryMasks.0 = scaleHistoryMasks.1
        scaleHistory.1 = pose
        scaleHistoryMasks.1 = confident
        return (middle > factor && newest > factor) || (middle < 1 / factor && newest < 1 / factor)
    }

    /// The median of the bones' length ratios (now / before) over the bones confident in both
    /// poses; 1 with fewer than 3 such bones.
    private func boneRatio(_ now: Pose, _ nowMask: UInt32, _ before: Pose, _ beforeMask: UInt32) -> Double {
        var count = 0
        // Indexed: a debug build's iterator over tuple elements allocates.
        for bone in 0..<Self.bones.count {
            let (a, b) = Self.bones[bone]
            let bits: UInt32 = (1 << UInt32(a)) | (1 << UInt32(b))
            guard nowMask & bits == bits, beforeMask & bits == bits else { continue }
            let lengthNow = Self.distance(now[a], now[b])
            let lengthBefore = Self.distance(before[a], before[b])
            guard lengthNow > 0, lengthBefore > 0 else { continue }
            Self.insertSorted(lengthNow / lengthBefore, into: boneRatios, count: count)
            count += 1
        }
        guard count >= 3 else { return 1 }
        return Self.median(ofSorted: boneRatios, count: count)
    }

    /// Inserts `value` into the ascending `count` values at `buffer` (which has room for one more).
    /// Insertion sort: the medians here and in the leg cue are over a few values, and nothing is
    /// allocated.
    @inline(__always)
    static func insertSorted(_ value: Double, into buffer: UnsafeMutablePointer<Double>, count: Int) {
        var position = count
        while position > 0, buffer[position - 1] > value {
            buffer[position] = buffer[position - 1]
            position -= 1
        }
        buffer[position] = value
    }

    @inline(__always)
    static func median(ofSorted buffer: UnsafeMutablePointer<Double>, count: Int) -> Double {
        count % 2 == 1 ? buffer[count / 2] : (buffer[count / 2 - 1] + buffer[count / 2]) / 2
    }

    @inline(__always)
    private static func distance(_ a: Keypoint, _ b: Keypoint) -> Double {
        let dx = Double(a.x) - Double(b.x), dy = Double(a.y) - Double(b.y)
        return (dx * dx + dy * dy).squareRoot()
    }
}
