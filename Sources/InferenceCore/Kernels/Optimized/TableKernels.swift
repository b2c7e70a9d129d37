import CKernels

/// A 256-entry table indexed by an input byte: entry `i` is the operator's answer for input
/// code `i`, `entryBytes` bytes wide. Owns its memory (allocated at Prepare).
final class ByteTable {
    let entries: UnsafeMutableRawPointer
    let entryBytes: Int
    /// Elements the node maps through the table per invoke.
    let count: Int

    init(entryBytes: Int, count: Int) {
        entries = UnsafeMutableRawPointer.allocate(byteCount: 256 * entryBytes, alignment: 16)
        self.entryBytes = entryBytes
        self.count = count
    }

    deinit { entries.deallocate() }
}

/// A 65536-entry table for a binary int8 operator (out = table[a << 8 | b]) and the coalesced
/// 6-D walk over its inputs (dimensions, strides1, strides2: 18 Int64s). Owns its memory.
final class PairTable {
    let entries = UnsafeMutablePointer<UInt8>.allocate(capacity: 65536)
    let walk = UnsafeMutablePointer<Int64>.allocate(capacity: 18)

    deinit {
        entries.deallocate()
        walk.deallocate()
    }
}

extension OptimizedKernel {
    /// A unary 1-byte-input node as a table: the reference kernel run once on the 256 inputs.
    static func byteTable(entryBytes: Int, count: Int, variant: KernelVariant, name: String,
                          reference: (UnsafeRawPointer, UnsafeMutableRawPointer) -> Void) -> OptimizedKernel {
        let inputs = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        defer { inputs.deallocate() }
        for index in 0..<256 { inputs[index] = UInt8(index) }
        let table = ByteTable(entryBytes: entryBytes, count: count)
        reference(UnsafeRawPointer(inputs), table.entries)
        let isa = variant.isa
        return OptimizedKernel(name: name, variant: variant, evaluate: { tensors in
            pw_lookup_u8(isa, table.entries, Int32(table.entryBytes), Int64(table.count),
                         tensors.input(0).assumingMemoryBound(to: UInt8.self), tensors.output())
            return nil
        }, byteTable: table)
    }

    /// A broadcast binary int8 node as a table: the reference kernel run once on all 65536
    /// (a, b) pairs, so every entry is the reference's answer.
    static func pairTable(_ plan: BroadcastPlan, variant: KernelVariant, name: String,
                          reference: (UnsafePointer<Int8>, UnsafePointer<Int8>, UnsafeMutablePointer<Int8>) -> Void)
        -> OptimizedKernel
    {
        let a = UnsafeMutablePointer<Int8>.allocate(capacity: 65536)
        let b = UnsafeMutablePointer<Int8>.allocate(capacity: 65536)
        defer {
            a.deallocate()
            b.deallocate()
        }
        for index in 0..<65536 {
            a[index] = Int8(truncatingIfNeeded: index >> 8)
            b[index] = Int8(truncatingIfNeeded: index & 255)
        }
        let table = PairTable()
        table.entries.withMemoryRebound(to: Int8.self, capacity: 65536) { reference(a, b, $0) }
        // Coalesce neighbouring dimensions that both inputs walk alike (contiguous, or both
        // broadcast), so the inner loop is as long as possible (an image minus a scalar is one loop).
        // Dimensions of size 1 are dropped; walking from the innermost out, a dimension joins the
        // one inside it when both inputs step through it as one run.
        var d: [Int] = [], s1: [Int] = [], s2: [Int] = []  // innermost first
        for axis in stride(from: 5, through: 0, by: -1) where plan.dimensions[axis] != 1 {
            let size = plan.dimensions[axis], a = plan.strides1[axis], b = plan.strides2[axis]
            if let last = d.indices.last, a == s1[last] * d[last], b == s2[last] * d[last] {
                d[last] *= size
            } else {
                d.append(size)
                s1.append(a)
                s2.append(b)
            }
        }
        while d.count < 6 {
            d.append(1)
            s1.append(0)
            s2.append(0)
        }
        d.reverse()
        s1.reverse()
        s2.reverse()
        for axis in 0..<6 {
            table.walk[axis] = Int64(d[axis])
            table.walk[6 + axis] = Int64(s1[axis])
            table.walk[12 + axis] = Int64(s2[axis])
        }
        let isa = variant.isa
        return OptimizedKernel(name: name, variant: variant, evaluate: { tensors in
            pw_binary_table_int8(isa, table.entries, table.walk, table.walk + 6, table.walk + 12,
                                 tensors.input(0).assumingMemoryBound(to: Int8.self),
                                 tensors.secondInput!.assumingMemoryBound(to: Int8.self),
                                 tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        })
    }

    /// Every (a, b) byte pair once, as a broadcast plan: what `pairTable`'s reference runs on.
    static let pairs = BroadcastPlan([65536], [65536], output: [65536])

    /// Nothing: the previous node's table already produced this node's output (ByteChainFusion).
    static func fused(into index: Int, variant: KernelVariant) -> OptimizedKernel {
        OptimizedKernel(name: "fused-into-\(index)", variant: variant, evaluate: { _ in nil })
    }
}
