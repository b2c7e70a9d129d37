/// The motion rule's second step (`RepetitionMotionRule`): the direction the body moves most along
/// over the window (its first principal axis) turns each feature row into one number. No
/// per-action joint: the same code counts squats, jumping jacks or a press, and follows the person
/// turning.
///
/// Takes: the rule's ring of feature rows (`RepetitionMotionFeatures.count` floats each, `rows` of
/// them from ring row `oldest`). Gives: `projection`, the window on the axis, oldest first. The axis
/// is warm-started from the previous frame's (two power iterations per frame; eight after
/// `restart`), so no frame pays for a full eigen-solve. Allocation-free after `init`.
final class RepetitionMotionAxis {
    private let capacity: Int
    /// The window's mean (per feature), the principal axis and a scratch vector.
    private let mean: UnsafeMutablePointer<Double>
    private let axis: UnsafeMutablePointer<Double>
    private let scratch: UnsafeMutablePointer<Double>
    private var hasAxis = false
    /// The window projected on the axis, oldest first (as many as the last `update`'s rows).
    let projection: UnsafeMutablePointer<Double>

    init(capacity: Int) {
        self.capacity = capacity
        let width = RepetitionMotionFeatures.count
        mean = .allocate(capacity: width)
        mean.initialize(repeating: 0, count: width)
        axis = .allocate(capacity: width)
        axis.initialize(repeating: 0, count: width)
        scratch = .allocate(capacity: width)
        scratch.initialize(repeating: 0, count: width)
        projection = .allocate(capacity: capacity)
        projection.initialize(repeating: 0, count: capacity)
    }

    deinit {
        mean.deallocate()
        axis.deallocate()
        scratch.deallocate()
        projection.deallocate()
    }

    /// The next `update` starts the axis afresh (a new window).
    func restart() {
        hasAxis = false
    }

    /// The window's principal axis by power iteration on its covariance (as Dᵀ(D·v), which never
    /// forms the 26 × 26 matrix), warm-started from the last frame's axis, then the window's
    /// projection on it. `verticalOnly` leaves the horizontal features (the even ones) out: they
    /// neither steer the axis nor add to the projection, and the axis has no part along them.
    func update(window: UnsafeMutablePointer<Float>, rows count: Int, oldest: Int, verticalOnly: Bool) {
        let width = RepetitionMotionFeatures.count
        let used = stride(from: verticalOnly ? 1 : 0, to: width, by: verticalOnly ? 2 : 1)
        for feature in 0..<width { mean[feature] = 0 }
        for step in 0..<count {
            let row = window + ((oldest + step) % capacity) * width
            for feature in 0..<width { mean[feature] += Double(row[feature]) }
        }
        let inverseCount = 1 / Double(count)
        for feature in 0..<width { mean[feature] *= inverseCount }

        var iterations = 2
        if !hasAxis {
            // Start from the feature in use that varies most (an axis along a left-out one would
            // never move); a few more iterations lock on, and the next frames keep refining (two
            // per frame), so no frame pays for a full eigen-solve.
            var best = 0
            var bestVariance = -1.0
            for feature in used {
                var variance = 0.0
                for step in 0..<count {
                    let value = Double(window[((oldest + step) % capacity) * width + feature]) - mean[feature]
                    variance += value * value
                }
                if variance > bestVariance { bestVariance = variance; best = feature }
            }
            for feature in 0..<width { axis[feature] = feature == best ? 1 : 0 }
            iterations = 8
            hasAxis = true
        }
        for _ in 0..<iterations {
            projectWindow(window, count: count, oldest: oldest, used: used)
            for feature in 0..<width { scratch[feature] = 0 }
            for step in 0..<count {
                let row = window + ((oldest + step) % capacity) * width
                let weight = projection[step]
                for feature in used { scratch[feature] += (Double(row[feature]) - mean[feature]) * weight }
            }
            var norm = 0.0
            for feature in 0..<width { norm += scratch[feature] * scratch[feature] }
            // A window without any motion has no axis: keep the last one.
            guard norm > 1e-18 else { break }
            let inverseNorm = 1 / norm.squareRoot()
            for feature in 0..<width { axis[feature] = scratch[feature] * inverseNorm }
        }
        projectWindow(window, count: count, oldest: oldest, used: used)
    }

    private func projectWindow(_ window: UnsafeMutablePointer<Float>, count: Int, oldest: Int, used: StrideTo<Int>) {
        let width = RepetitionMotionFeatures.count
        for step in 0..<count {
            let row = window + ((oldest + step) % capacity) * width
            var dot = 0.0
            for feature in used { dot += (Double(row[feature]) - mean[feature]) * axis[feature] }
            projection[step] = dot
        }
    }
}
