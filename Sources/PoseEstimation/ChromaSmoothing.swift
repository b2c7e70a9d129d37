/// Smooths the colour of the pose model's input, not its brightness, when the colour is noisy.
///
/// A dim room's camera turns up its gain, and the noise that comes with it is strongest in the
/// colour: a speckle of red and green on every surface, in which MoveNet loses the person. Taking
/// the colour away does not help (MoveNet needs it), nor does brightening (the noise grows with
/// it), nor blurring everything (the body's edges go too). Averaging only the colour over a
/// neighbourhood keeps the edges, which live mostly in the brightness.
///
/// The colour is measured as the two differences R − Y and B − Y (Y the BT.601 luma); each is
/// averaged over a `radius` box, the brightness over a smaller `lumaRadius` box, and the pixel
/// rebuilt from them. Whether the colour is noisy is measured first: the mean absolute difference
/// of R − Y and B − Y between horizontal neighbours. On the dev clips as filmed it stays under 1.5
/// in nearly every frame (one dim-looking workouttracker clip reaches 8.3); with a dim room's noise
/// (the home-conditions tool's `dim`) it is above 10 in nearly every frame. Up to `noisyAbove`
/// nothing is changed, so normal pictures reach MoveNet exactly as converted.
///
/// On the 36 clips' dim condition (docs/history.md, 2026-11-28) this recovers 30 of 36 labelled
/// spans against 19 without it (34 as filmed). The radii were chosen there: colour 1, 2, 3, 4
/// gave 24, 29, 29, 30; with the brightness's radius 1, 31 (2: 31).
///
/// Owns its planes (allocated once for the input size); allocation-free per frame.
public struct ChromaSmoothing: ~Copyable {
    /// Smooth only when the colour noise measure is above this.
    public var noisyAbove: Float = 10
    /// The colour's box half width in input pixels.
    public var radius = 2
    /// The brightness's box half width (0: the brightness is kept as it is).
    public var lumaRadius = 1

    private let side: Int
    private let luma: UnsafeMutablePointer<Int16>
    private let red: UnsafeMutablePointer<Int16>
    private let blue: UnsafeMutablePointer<Int16>
    private let rowSums: UnsafeMutablePointer<Int32>

    /// For a `side`×`side` RGB input.
    public init(side: Int) {
        self.side = side
        luma = .allocate(capacity: side * side)
        red = .allocate(capacity: side * side)
        blue = .allocate(capacity: side * side)
        rowSums = .allocate(capacity: side * side * 2)
    }

    deinit {
        luma.deallocate()
        red.deallocate()
        blue.deallocate()
        rowSums.deallocate()
    }

    /// The colour noise measure of `pixels` (see the type); fills the planes for `smooth`.
    public mutating func colourNoise(_ pixels: UnsafePointer<UInt8>) -> Float {
        var total = 0, count = 0
        for y in 0..<side {
            for x in 0..<side {
                let index = y * side + x, offset = index * 3
                let r = Int(pixels[offset]), g = Int(pixels[offset + 1]), b = Int(pixels[offset + 2])
                let yValue = (77 * r + 150 * g + 29 * b + 128) >> 8
                luma[index] = Int16(yValue)
                red[index] = Int16(r - yValue)
                blue[index] = Int16(b - yValue)
                // Letterbox bars and blacked-out people are exact black: not part of the picture.
                if x > 0, yValue > 0, luma[index - 1] > 0 {
                    total += abs(Int(red[index]) - Int(red[index - 1])) + abs(Int(blue[index]) - Int(blue[index - 1]))
                    count += 2
                }
            }
        }
        return count > 0 ? Float(total) / Float(count) : 0
    }

    /// Measures the colour noise and, above `noisyAbove`, smooths the colour in place. Returns
    /// whether it did.
    @discardableResult
    public mutating func apply(to pixels: UnsafeMutablePointer<UInt8>) -> Bool {
        guard colourNoise(pixels) > noisyAbove else { return false }
        boxAverage(red, radius: radius)
        boxAverage(blue, radius: radius)
        if lumaRadius > 0 {
            // Keep black black: a box reaching into a bar would otherwise lift it.
            for index in 0..<(side * side) where luma[index] == 0 { red[index] = Int16.min }
            boxAverage(luma, radius: lumaRadius)
            for index in 0..<(side * side) where red[index] == Int16.min { luma[index] = 0 }
        }
        for index in 0..<(side * side) {
            let yValue = Int(luma[index])
            guard yValue > 0 else { continue }  // keep black black
            let r = min(255, max(0, yValue + Int(red[index])))
            let b = min(255, max(0, yValue + Int(blue[index])))
            let g = min(255, max(0, (yValue * 256 - 77 * r - 29 * b + 75) / 150))
            pixels[index * 3] = UInt8(r)
            pixels[index * 3 + 1] = UInt8(g)
            pixels[index * 3 + 2] = UInt8(b)
        }
        return true
    }

    /// Replaces `plane` with its mean over a (2 `radius` + 1)² box, edges clamped.
    private func boxAverage(_ plane: UnsafeMutablePointer<Int16>, radius: Int) {
        let horizontal = rowSums, span = 2 * radius + 1
        for y in 0..<side {
            for x in 0..<side {
                var sum: Int32 = 0
                for dx in -radius...radius { sum += Int32(plane[y * side + min(max(x + dx, 0), side - 1)]) }
                horizontal[y * side + x] = sum
            }
        }
        let area = Int32(span * span)
        for y in 0..<side {
            for x in 0..<side {
                var sum: Int32 = 0
                for dy in -radius...radius { sum += horizontal[min(max(y + dy, 0), side - 1) * side + x] }
                plane[y * side + x] = Int16((sum + (sum >= 0 ? area / 2 : -area / 2)) / area)
            }
        }
    }
}
