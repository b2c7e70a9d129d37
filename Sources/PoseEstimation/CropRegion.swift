import Capture

/// A square region of the frame, in frame pixels, that is scaled into the pose model's square
/// input. It may extend past the frame's edges: those parts are filled with black, which is how a
/// letterbox of the whole frame is expressed (a square as wide as the frame's longer side).
public struct CropRegion: Equatable, Sendable {
    /// Left edge in frame pixels (may be negative).
    public var minX: Float
    /// Top edge in frame pixels (may be negative).
    public var minY: Float
    /// Side length in frame pixels.
    public var side: Float

    public init(minX: Float, minY: Float, side: Float) {
        self.minX = minX
        self.minY = minY
        self.side = side
    }

    /// The letterbox of a whole frame: a square as long as the frame's longer side, centred on it.
    public static func wholeFrame(width: Int, height: Int) -> CropRegion {
        let side = Float(max(width, height))
        return CropRegion(minX: (Float(width) - side) / 2, minY: (Float(height) - side) / 2, side: side)
    }

    /// The region as the frame converter takes it.
    public var rectangle: FrameRectangle {
        FrameRectangle(x: Double(minX), y: Double(minY), width: Double(side), height: Double(side))
    }

    /// Maps a point in the model's normalised input coordinates (0...1 across the square) to frame pixels.
    @inlinable
    public func framePoint(normalizedX: Float, normalizedY: Float) -> (x: Float, y: Float) {
        (minX + normalizedX * side, minY + normalizedY * side)
    }
}

/// Chooses the next frame's crop region from the previous pose, as MoveNet's authors describe for
/// video ("crop region from the previous frame's keypoints"): centre on the hips, make the square
/// large enough for the torso (×1.9) and every confident keypoint (×1.2), clamp to the frame, and
/// fall back to the whole frame when the torso is not visible or the square would outgrow the frame.
///
/// The widely copied reference code measures the body range from the last torso joint instead of
/// each keypoint in its body loop; this implements the intent (each confident keypoint counts).
public struct CropPolicy: Sendable {
    /// A keypoint takes part in cropping at or above this score (MoveNet's reference uses 0.2).
    public var minimumKeypointScore: Float = 0.2
    /// Torso extent multiplier (reference: 1.9).
    public var torsoExpansion: Float = 1.9
    /// Body extent multiplier (reference: 1.2).
    public var bodyExpansion: Float = 1.2

    public init() {}

    /// The crop region for the next frame given this frame's pose (nil: nobody, use the whole frame).
    public func nextRegion(after pose: Pose?, frameWidth: Int, frameHeight: Int) -> CropRegion {
        let whole = CropRegion.wholeFrame(width: frameWidth, height: frameHeight)
        guard let pose, torsoVisible(pose) else { return whole }
        let centerX = (pose[.leftHip].x + pose[.rightHip].x) / 2
        let centerY = (pose[.leftHip].y + pose[.rightHip].y) / 2

        var torsoX: Float = 0, torsoY: Float = 0
        for joint in [Joint.leftShoulder, .rightShoulder, .leftHip, .rightHip] {
            torsoX = max(torsoX, abs(centerX - pose[joint].x))
            torsoY = max(torsoY, abs(centerY - pose[joint].y))
        }
        var bodyX: Float = 0, bodyY: Float = 0
        for index in 0..<Joint.count where pose[index].score >= minimumKeypointScore {
            bodyX = max(bodyX, abs(centerX - pose[index].x))
            bodyY = max(bodyY, abs(centerY - pose[index].y))
        }
        let halfSide = max(torsoX * torsoExpansion, torsoY * torsoExpansion, bodyX * bodyExpansion, bodyY * bodyExpansion)
        return Self.square(centerX: centerX, centerY: centerY, halfSide: halfSide, frameWidth: frameWidth, frameHeight: frameHeight)
    }

    /// A square around a person's box (a pose's box from an earlier frame), 1.5 times its longer
    /// side: more room than `bodyExpansion` gives a current pose, since the person has moved since.
    /// Clamped like `nextRegion`; the whole frame when it would outgrow it.
    public func region(around box: BoundingBox, frameWidth: Int, frameHeight: Int) -> CropRegion {
        Self.square(centerX: (box.minX + box.maxX) / 2, centerY: (box.minY + box.maxY) / 2,
                    halfSide: max(box.width, box.height) / 2 * 1.5, frameWidth: frameWidth, frameHeight: frameHeight)
    }

    /// The square of `halfSide` around the centre, never larger than the distance from the centre
    /// to the farthest frame edge; the whole frame when it would still outgrow the frame.
    private static func square(centerX: Float, centerY: Float, halfSide: Float, frameWidth: Int, frameHeight: Int) -> CropRegion {
        let width = Float(frameWidth), height = Float(frameHeight)
        let halfSide = min(halfSide, max(centerX, width - centerX, centerY, height - centerY))
        guard halfSide > 0, halfSide <= max(width, height) / 2 else { return .wholeFrame(width: frameWidth, height: frameHeight) }
        return CropRegion(minX: centerX - halfSide, minY: centerY - halfSide, side: halfSide * 2)
    }

    /// A hip and a shoulder scoring above the threshold: enough to centre on.
    public func torsoVisible(_ pose: Pose) -> Bool {
        (pose[.leftHip].score > minimumKeypointScore || pose[.rightHip].score > minimumKeypointScore)
            && (pose[.leftShoulder].score > minimumKeypointScore || pose[.rightShoulder].score > minimumKeypointScore)
    }
}
