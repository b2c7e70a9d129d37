/// Draws a pose as a wireframe on a frame: bones and joints coloured by score (red = unsure,
/// green = sure), and the crop region the pose model looked at, so an owner can aim a headless camera.
public struct WireframeRenderer: Sendable {
    /// Joints and bones below this score are not drawn (MoveNet places every joint somewhere).
    public var minimumScore: Float = 0.2
    /// Line thickness and joint radius scale with the frame: this fraction of its shorter side.
    public var thicknessFraction: Float = 0.008

    public init() {}

    /// The colour for a score: red below 0.3, shading to green at 0.7 and above.
    public static func color(forScore score: Float) -> (UInt8, UInt8, UInt8) {
        let t = min(1, max(0, (score - 0.3) / 0.4))
        return (UInt8((1 - t) * 255), UInt8(t * 255), 0)
    }

    /// Boxes another person in view (not the watched one) in blue: the pose stage blacks them out
    /// of the watched person's picture.
    public func drawOtherPerson(_ box: BoundingBox, on image: inout RGBImage) {
        let thickness = max(2, Float(min(image.width, image.height)) * thicknessFraction)
        image.strokeRectangle(minX: box.minX, minY: box.minY, maxX: box.maxX, maxY: box.maxY, thickness: thickness, color: (40, 120, 255))
    }

    /// Paints `pose` (frame coordinates) and `region` onto `image`.
    public func draw(_ pose: Pose?, region: CropRegion?, on image: inout RGBImage) {
        let thickness = max(2, Float(min(image.width, image.height)) * thicknessFraction)
        if let region {
            image.strokeRectangle(minX: region.minX, minY: region.minY, maxX: region.minX + region.side,
                                  maxY: region.minY + region.side, thickness: max(1, thickness / 2), color: (255, 220, 0))
        }
        guard let pose else { return }
        for (from, to) in Pose.skeletonEdges {
            let a = pose[from], b = pose[to]
            guard a.score >= minimumScore, b.score >= minimumScore else { continue }
            image.drawLine(from: (a.x, a.y), to: (b.x, b.y), thickness: thickness, color: Self.color(forScore: min(a.score, b.score)))
        }
        for joint in Joint.allCases where pose[joint].score >= minimumScore {
            let point = pose[joint]
            image.fillDisc(x: point.x, y: point.y, radius: thickness * 1.2, color: (255, 255, 255))
            image.fillDisc(x: point.x, y: point.y, radius: thickness * 0.8, color: Self.color(forScore: point.score))
        }
    }
}
