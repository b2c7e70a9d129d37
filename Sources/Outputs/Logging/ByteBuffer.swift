#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A growable byte buffer with one owner, reused for every log entry so that encoding an entry
/// allocates nothing once the buffer is large enough (it only grows, by doubling, for an entry
/// larger than any before it).
///
/// Numbers are formatted by hand: `String(describing:)` and interpolation allocate, and this buffer
/// is filled from the frame loop.
public struct ByteBuffer: ~Copyable {
    private var base: UnsafeMutableRawPointer
    /// Bytes the buffer can hold before it has to grow.
    public private(set) var capacity: Int
    /// Bytes written since the last `removeAll()`.
    public private(set) var count = 0

    /// Allocates `capacity` bytes up front.
    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// Forgets the contents and keeps the storage.
    public mutating func removeAll() { count = 0 }

    /// Makes room for `extra` more bytes, growing (the only allocation this type makes) if needed.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra <= capacity { return }
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends one byte.
    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Appends raw bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends a literal's UTF-8 bytes.
    public mutating func append(_ text: StaticString) {
        if text.hasPointerRepresentation {
            append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        } else {
            text.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Appends a string's UTF-8 bytes (no copy for native strings).
    public mutating func append(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil { for byte in text.utf8 { append(byte) } }
    }

    /// Appends a decimal integer.
    public mutating func append(integer value: Int) {
        // Digits are produced backwards into a small stack tuple, then copied.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes ≥ 20 digits of UInt64
        var magnitude = value.magnitude
        var length = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[23 - length] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
                magnitude /= 10
                length += 1
            } while magnitude > 0
        }
        if value < 0 { append(UInt8(ascii: "-")) }
        withUnsafeBytes(of: &digits) { append(UnsafeRawBufferPointer(rebasing: $0[(24 - length)...])) }
    }

    /// Appends a fixed-point decimal with `fractionDigits` digits after the point (0...9), rounded
    /// half away from zero; "nan", "inf" and "-inf" for non-finite values.
    public mutating func append(decimal value: Double, fractionDigits: Int) {
        precondition((0...9).contains(fractionDigits))
        if value.isNaN { append("nan"); return }
        if value.isInfinite { append(value < 0 ? "-inf" : "inf"); return }
        var scale: UInt64 = 1
        for _ in 0..<fractionDigits { scale *= 10 }
        let scaled = (value.magnitude * Double(scale)).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9.0e18 else { append(integer: value < 0 ? Int.min : Int.max); return }
        let fixed = UInt64(scaled)
        if value < 0 && fixed != 0 { append(UInt8(ascii: "-")) }
        append(integer: Int(fixed / scale))
        guard fractionDigits > 0 else { return }
        append(UInt8(ascii: "."))
        var fraction = fixed % scale
        var divisor = scale / 10
        while divisor > 0 {
            append(UInt8(truncatingIfNeeded: fraction / divisor) + 0x30)
            fraction %= divisor
            divisor /= 10
        }
    }

    /// Lends the bytes written so far.
    public func withBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The contents as an array (tests and diagnostics only: this allocates).
    public var bytes: [UInt8] { withBytes { Array($0) } }
}
