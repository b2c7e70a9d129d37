/// The pose model's input as a picture: how bright it is, and a contrast stretch for dim rooms.
///
/// A dim room gives MoveNet a dark, flat picture (everything within a few dozen grey levels) in
/// which it finds fewer joints. The stretch maps the input's 1st–99th percentile of byte values
/// onto 0…255 when that range is narrow, through a 256-entry table; a picture with enough
/// contrast is left as it is. The mean is reported either way so the frame loop can say when the
/// picture is too dark to see anyone.
///
/// Owns its histogram and table (allocated once); measuring and stretching allocate nothing.
public struct InputBrightness: ~Copyable {
    /// Stretch only when the 1st–99th percentile range is narrower than this (of 255).
    public var stretchBelowRange = 160
    /// Never stretch by more than this factor (noise grows with it).
    public var maximumGain: Float = 3

    private let histogram: UnsafeMutablePointer<Int32>
    private let table: UnsafeMutablePointer<UInt8>
    private var scratch: UnsafeMutablePointer<UInt8>
    private var scratchCount = 0

    public init() {
        histogram = .allocate(capacity: 256)
        table = .allocate(capacity: 256)
        scratch = .allocate(capacity: 1)
    }

    deinit {
        histogram.deallocate()
        table.deallocate()
        scratch.deallocate()
    }

    /// Smooths a `side`×`side` RGB picture in place with the 3×3 binomial kernel (1 2 1)²/16,
    /// edges clamped: MoveNet's input is a bilinear sample of 2×2 source pixels per input pixel,
    /// so a camera's noise reaches it almost undiminished; this averages it down.
    public mutating func smooth(_ pixels: UnsafeMutablePointer<UInt8>, side: Int) {
        let count = side * side * 3
        if scratchCount < count {
            scratch.deallocate()
            scratch = .allocate(capacity: count)
            scratchCount = count
        }
        scratch.update(from: pixels, count: count)
        let rowBytes = side * 3
        for y in 0..<side {
            let above = scratch + max(y - 1, 0) * rowBytes, row = scratch + y * rowBytes
            let below = scratch + min(y + 1, side - 1) * rowBytes
            let out = pixels + y * rowBytes
            for x in 0..<side {
                let left = max(x - 1, 0) * 3, centre = x * 3, right = min(x + 1, side - 1) * 3
                for channel in 0..<3 {
                    @inline(__always) func column(_ offset: Int) -> Int {
                        Int(above[offset + channel]) + 2 * Int(row[offset + channel]) + Int(below[offset + channel])
                    }
                    let sum = column(left) + 2 * column(centre) + column(right)
                    out[centre + channel] = UInt8((sum + 8) >> 4)
                }
            }
        }
    }

    /// The mean byte value (0…255) of `count` bytes at `pixels`, and, with `stretch`, the bytes
    /// remapped in place when their range is narrow. Returns the mean before any stretch.
    public mutating func measure(_ pixels: UnsafeMutablePointer<UInt8>, count: Int, stretch: Bool) -> Float {
        guard count > 0 else { return 0 }
        histogram.initialize(repeating: 0, count: 256)
        var sum = 0
        for index in 0..<count {
            let value = Int(pixels[index])
            histogram[value] += 1
            sum += value
        }
        let mean = Float(sum) / Float(count)
        guard stretch else { return mean }
        // Letterbox bars and blacked-out people are exact zeros: leave them out of the range.
        let counted = count - Int(histogram[0])
        guard counted > count / 4 else { return mean }
        let low = percentile(0.01, of: counted), high = percentile(0.99, of: counted)
        guard high > low, high - low < stretchBelowRange else { return mean }
        let gain = min(maximumGain, 255 / Float(high - low))
        // Keep the range's middle where a 255-wide range would put it: the stretch adds contrast
        // around the picture's own mid-grey and lifts a dark picture towards mid-grey.
        let middle = Float(low + high) / 2
        let target = min(max(middle, Float(high - low) * gain / 2), 255 - Float(high - low) * gain / 2)
        table[0] = 0
        for value in 1..<256 {
            let mapped = target + (Float(value) - middle) * gain
            table[value] = UInt8(max(1, min(255, mapped.rounded())))
        }
        for index in 0..<count { pixels[index] = table[Int(pixels[index])] }
        return mean
    }

    /// The byte value below which `fraction` of the non-zero bytes lie.
    private func percentile(_ fraction: Double, of counted: Int) -> Int {
        let wanted = Int32(Double(counted) * fraction)
        var seen: Int32 = 0
        for value in 1..<256 {
            seen += histogram[value]
            if seen > wanted { return value }
        }
        return 255
    }
}
