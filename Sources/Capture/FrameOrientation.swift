/// How a camera's picture is turned to stand upright: a quarter-turn rotation, clockwise, then an
/// optional left-right mirror (`camera.rotation` and `camera.flip`). Every stage after capture
/// (pose, classifier, counter, snapshot) sees the upright picture; only the sampling of the
/// frame knows the camera's own orientation.
///
/// The eight combinations are every way a rectangle can lie on another (rotation 180 with flip is
/// an upside-down mirror). Coordinates map both ways with no loss: a quarter turn or a mirror
/// takes pixel centres to pixel centres, and a square to a square of the same side.
public struct FrameOrientation: Sendable, Hashable, CustomStringConvertible {
    /// Clockwise quarter turns, 0…3 (0°, 90°, 180°, 270°).
    public let quarterTurns: Int
    /// Mirror the turned picture left to right.
    public let mirrored: Bool

    /// The picture as the camera gives it.
    public static let upright = FrameOrientation(quarterTurns: 0, mirrored: false)

    /// The rotations `camera.rotation` accepts, in degrees clockwise.
    public static let degreeChoices = [0, 90, 180, 270]

    /// An orientation from `camera.rotation` (degrees clockwise, one of `degreeChoices`) and
    /// `camera.flip`; nil for any other angle (the config reader refuses those with a message).
    public init?(degrees: Int, mirrored: Bool = false) {
        guard let index = Self.degreeChoices.firstIndex(of: degrees) else { return nil }
        self.init(quarterTurns: index, mirrored: mirrored)
    }

    /// `quarterTurns` is taken modulo 4 (negative turns are counter-clockwise).
    public init(quarterTurns: Int, mirrored: Bool) {
        self.quarterTurns = ((quarterTurns % 4) + 4) % 4
        self.mirrored = mirrored
    }

    /// Clockwise degrees: 0, 90, 180 or 270.
    public var degrees: Int { quarterTurns * 90 }

    /// Whether the picture is used as the camera gives it (no work per frame).
    public var isIdentity: Bool { quarterTurns == 0 && !mirrored }

    /// Whether the upright picture's width is the camera's height.
    public var swapsSides: Bool { quarterTurns % 2 == 1 }

    /// `rotation 90, mirrored`.
    public var description: String { "rotation \(degrees)\(mirrored ? ", mirrored" : "")" }

    /// The upright picture's size for a camera frame of `width` × `height`.
    public func uprightSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsSides ? (height, width) : (width, height)
    }

    /// The orientation that also turns the upright picture `extraQuarterTurns` clockwise: what
    /// `camera.rotation` must become when people in today's upright picture lie on their side.
    /// A mirror reverses the sense of a turn that comes before it, hence the sign.
    public func turned(by extraQuarterTurns: Int) -> FrameOrientation {
        FrameOrientation(quarterTurns: quarterTurns + (mirrored ? -extraQuarterTurns : extraQuarterTurns), mirrored: mirrored)
    }

    // MARK: coordinates

    /// The camera-frame rectangle that becomes `rectangle` of the upright picture (both in pixel
    /// edges: pixel k covers [k, k+1)), for a camera frame of `width` × `height`. Width and
    /// height swap under a quarter turn, so a square stays the same square.
    public func sourceRectangle(of rectangle: FrameRectangle, frameWidth width: Int, frameHeight height: Int) -> FrameRectangle {
        let upright = uprightSize(width: width, height: height)
        // Undo the mirror first (it came last), then the turn.
        let x = mirrored ? Double(upright.width) - rectangle.x - rectangle.width : rectangle.x
        let y = rectangle.y
        let w = Double(width), h = Double(height)
        switch quarterTurns {
        case 1:  // upright (u, v) ← camera (v, H − u)
            return FrameRectangle(x: y, y: h - x - rectangle.width, width: rectangle.height, height: rectangle.width)
        case 2:  // upright (u, v) ← camera (W − u, H − v)
            return FrameRectangle(x: w - x - rectangle.width, y: h - y - rectangle.height, width: rectangle.width, height: rectangle.height)
        case 3:  // upright (u, v) ← camera (W − v, u)
            return FrameRectangle(x: w - y - rectangle.height, y: x, width: rectangle.height, height: rectangle.width)
        default:
            return FrameRectangle(x: x, y: y, width: rectangle.width, height: rectangle.height)
        }
    }

    /// The camera-frame point that shows upright point (`x`, `y`) (continuous pixel coordinates).
    public func sourcePoint(x: Double, y: Double, frameWidth width: Int, frameHeight height: Int) -> (x: Double, y: Double) {
        let point = sourceRectangle(of: FrameRectangle(x: x, y: y, width: 0, height: 0), frameWidth: width, frameHeight: height)
        return (point.x, point.y)
    }

    // MARK: pixels

    /// Writes the upright picture of a packed RGB image (`width` × `height` camera pixels, 3
    /// bytes each, rows `width × 3` bytes apart) into `destination`, which must hold the same
    /// number of bytes and must not overlap `source`. Allocates nothing, so the frame loop can
    /// turn the model input with it; for a square image the sides stay as they are.
    public func reorient(rgb source: UnsafePointer<UInt8>, width: Int, height: Int, into destination: UnsafeMutablePointer<UInt8>) {
        let upright = uprightSize(width: width, height: height)
        // Upright pixel (u, v) is camera pixel start + u·stepU + v·stepV (in pixels).
        var start: Int, stepU: Int, stepV: Int
        switch quarterTurns {
        case 1: (start, stepU, stepV) = ((height - 1) * width, -width, 1)               // (v, H−1−u)
        case 2: (start, stepU, stepV) = ((height - 1) * width + width - 1, -1, -width)  // (W−1−u, H−1−v)
        case 3: (start, stepU, stepV) = (width - 1, width, -1)                          // (W−1−v, u)
        default: (start, stepU, stepV) = (0, 1, width)
        }
        if mirrored {
            start += (upright.width - 1) * stepU
            stepU = -stepU
        }
        var output = destination
        for v in 0..<upright.height {
            var pixel = start + v * stepV
            for _ in 0..<upright.width {
                let input = source + pixel * 3
                output[0] = input[0]
                output[1] = input[1]
                output[2] = input[2]
                output += 3
                pixel += stepU
            }
        }
    }
}

/// `FrameConverter` for a square tensor, with the picture turned to stand upright first.
///
/// The crop region is given in upright coordinates; the camera-frame square under it is
/// converted as usual (same bilinear sampling, black outside the frame), into a scratch tensor
/// this converter owns, which is then written turned into the caller's tensor. Allocates only in
/// `init` (the scratch tensor) and where `FrameConverter` does. The identity orientation converts
/// straight into the caller's tensor, as before.
///
/// Square only: a quarter turn of a square tensor is the same square, so one `FrameConverter`
/// serves every orientation (a pose model's input is square; snapshots turn whole pictures with
/// `FrameOrientation.reorient` instead).
public struct OrientedFrameConverter: ~Copyable {
    /// The tensor's side in pixels.
    public let side: Int
    /// How the camera's picture is turned; may change between frames.
    public var orientation = FrameOrientation.upright
    private var converter: FrameConverter
    private let scratch: UnsafeMutablePointer<UInt8>

    /// A converter for a `side` × `side` RGB tensor (see `FrameConverter.init` for `expectedJPEGSize`).
    public init(side: Int, expectedJPEGSize: (width: Int, height: Int)? = nil) {
        precondition(side > 0)
        self.side = side
        converter = FrameConverter(tensorWidth: side, tensorHeight: side, expectedJPEGSize: expectedJPEGSize)
        scratch = .allocate(capacity: side * side * 3)
    }

    deinit { scratch.deallocate() }

    /// Converts the upright picture's `region` (upright pixels) of `frame` into `tensor`
    /// (`side × side × 3` bytes). Returns false when the frame is broken (`FrameConverter`'s nil);
    /// the tensor is then unspecified.
    public mutating func convert(_ frame: borrowing Frame, uprightRegion region: FrameRectangle, into tensor: UnsafeMutablePointer<UInt8>) -> Bool {
        let source = orientation.sourceRectangle(of: region, frameWidth: frame.layout.width, frameHeight: frame.layout.height)
        if orientation.isIdentity {
            return converter.convert(frame, region: .crop(source), into: tensor) != nil
        }
        guard converter.convert(frame, region: .crop(source), into: scratch) != nil else { return false }
        orientation.reorient(rgb: scratch, width: side, height: side, into: tensor)
        return true
    }
}
