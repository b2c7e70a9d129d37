import PoseEstimation

/// The classifier's pose-window normalisation, spec "pw-norm-v1" (training/README.md), ported
/// operation for operation from `training/normalize.py` so Swift and training see the same numbers.
///
/// Per window: a joint is valid when its score ≥ `scoreMinimum`. The centre is the mean hip point
/// over the slots that have one (mid-hip, or the one valid hip), else the mean shoulder point, else
/// the mean valid joint. The scale is the mean over slots with both of max(|shoulder point − hip
/// point|, shoulder width), else the largest extent of the valid joints ÷ `fallbackDivisor`, at
/// least `minimumScale`. Each joint becomes ((x − cx)/S, (y − cy)/S, 1) clipped to ±`clip`, or
/// (0, 0, 0) when invalid. Float32 throughout; sums run in slot order, then joint order.
public struct PoseNormalization: Sendable, Equatable {
    /// The spec this implements.
    public static let specification = "pw-norm-v1"

    public var scoreMinimum: Float
    public var clip: Float
    public var minimumScale: Float
    public var fallbackDivisor: Float
    /// COCO-17 indices of the joints the model reads, in its input order.
    public let jointIndices: [Int]
    // Positions of the shoulders and hips within `jointIndices`.
    let leftShoulder: Int, rightShoulder: Int, leftHip: Int, rightHip: Int

    /// Parameters as the model's metadata gives them. Fails when a shoulder or hip is not among the joints.
    public init?(scoreMinimum: Float, clip: Float, minimumScale: Float, fallbackDivisor: Float, jointIndices: [Int]) {
        guard let ls = jointIndices.firstIndex(of: Joint.leftShoulder.rawValue),
              let rs = jointIndices.firstIndex(of: Joint.rightShoulder.rawValue),
              let lh = jointIndices.firstIndex(of: Joint.leftHip.rawValue),
              let rh = jointIndices.firstIndex(of: Joint.rightHip.rawValue),
              jointIndices.allSatisfy({ (0..<Joint.count).contains($0) }),
              fallbackDivisor > 0, clip > 0 else { return nil }
        self.scoreMinimum = scoreMinimum
        self.clip = clip
        self.minimumScale = minimumScale
        self.fallbackDivisor = fallbackDivisor
        self.jointIndices = jointIndices
        (leftShoulder, rightShoulder, leftHip, rightHip) = (ls, rs, lh, rh)
    }

    /// Values per slot: 3 per joint.
    public var featuresPerSlot: Int { jointIndices.count * 3 }

    /// Writes the window's features into `output` (`window.length × featuresPerSlot` floats).
    public func normalize(_ window: PoseWindow, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(output.count == window.length * featuresPerSlot)
        // Pass 1: centre and scale, accumulated in slot order exactly as the training code does.
        var hipSumX: Float = 0, hipSumY: Float = 0, hipCount: Float = 0
        var shoulderSumX: Float = 0, shoulderSumY: Float = 0, shoulderCount: Float = 0
        var jointSumX: Float = 0, jointSumY: Float = 0, jointCount: Float = 0
        var scaleSum: Float = 0, scaleCount: Float = 0
        var minX = Float.infinity, maxX = -Float.infinity, minY = Float.infinity, maxY = -Float.infinity
        window.forEachSlot { pose, _ in
            let hip = pointOf(pose, leftHip, rightHip)
            let shoulder = pointOf(pose, leftShoulder, rightShoulder)
            if let hip { hipSumX += hip.x; hipSumY += hip.y; hipCount += 1 }
            if let shoulder { shoulderSumX += shoulder.x; shoulderSumY += shoulder.y; shoulderCount += 1 }
            if let hip, let shoulder {
                let dx = shoulder.x - hip.x, dy = shoulder.y - hip.y
                let torso = (dx * dx + dy * dy).squareRoot()
                var width: Float = 0
                let left = pose[jointIndices[leftShoulder]], right = pose[jointIndices[rightShoulder]]
                if left.score >= scoreMinimum && right.score >= scoreMinimum {
                    let wx = left.x - right.x, wy = left.y - right.y
                    width = (wx * wx + wy * wy).squareRoot()
                }
                scaleSum += max(torso, width)
                scaleCount += 1
            }
            for joint in jointIndices {
                let point = pose[joint]
                guard point.score >= scoreMinimum else { continue }
                jointSumX += point.x
                jointSumY += point.y
                jointCount += 1
                minX = min(minX, point.x); maxX = max(maxX, point.x)
                minY = min(minY, point.y); maxY = max(maxY, point.y)
            }
        }
        var centerX: Float = 0, centerY: Float = 0, scale: Float = 1
        if jointCount > 0 {
            if hipCount > 0 {
                centerX = hipSumX / hipCount; centerY = hipSumY / hipCount
            } else if shoulderCount > 0 {
                centerX = shoulderSumX / shoulderCount; centerY = shoulderSumY / shoulderCount
            } else {
                centerX = jointSumX / jointCount; centerY = jointSumY / jointCount
            }
            scale = scaleCount > 0 ? scaleSum / scaleCount : max(maxX - minX, maxY - minY) / fallbackDivisor
            scale = max(scale, minimumScale)
        }
        // Pass 2: features.
        var index = 0
        window.forEachSlot { pose, _ in
            for joint in jointIndices {
                let point = pose[joint]
                if point.score >= scoreMinimum {
                    output[index] = min(max((point.x - centerX) / scale, -clip), clip)
                    output[index + 1] = min(max((point.y - centerY) / scale, -clip), clip)
                    output[index + 2] = 1
                } else {
                    output[index] = 0
                    output[index + 1] = 0
                    output[index + 2] = 0
                }
                index += 3
            }
        }
    }

    /// The mid-point of two joints when both are valid, the valid one when one is, else nil.
    private func pointOf(_ pose: Pose, _ first: Int, _ second: Int) -> (x: Float, y: Float)? {
        let a = pose[jointIndices[first]], b = pose[jointIndices[second]]
        let aValid = a.score >= scoreMinimum, bValid = b.score >= scoreMinimum
        if aValid && bValid { return ((a.x + b.x) * 0.5, (a.y + b.y) * 0.5) }
        if aValid { return (a.x, a.y) }
        if bValid { return (b.x, b.y) }
        return nil
    }
}
