#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs one model: owns the tensor arena and every node's prepared parameters.
///
/// `init` does Init and Prepare for every node (shapes and dtypes checked, quantization parameters
/// computed, lookup tables built, kernel variants chosen) and plans and allocates the one arena.
/// After that, `invoke()` allocates nothing: kernels only read what Prepare computed and write into
/// preplanned arena slices.
///
/// Not thread-safe: one interpreter belongs to one thread (the frame loop). Create several for
/// several threads; they can share one `Model`.
public final class Interpreter {
    /// The model this interpreter runs (kept alive for its constant tensors).
    public let model: Model
    /// The size of the tensor arena planned from tensor lifetimes, in bytes.
    public let arenaByteCount: Int
    /// Bytes of constant tensors copied out of the file because they were misaligned (usually 0).
    public let copiedConstantByteCount: Int
    /// The registry that chose each node's kernel variant.
    public let registry: KernelRegistry

    private let arena: UnsafeMutableRawPointer
    /// One data pointer per tensor (into the arena, the model file, or a copied constant); a
    /// manual allocation so `invoke()` can hand kernels a buffer without any closure or copy.
    private let tensorData: UnsafeMutableBufferPointer<UnsafeMutableRawPointer>
    private let nodes: [PreparedNode]
    /// The invoke loop's view of `nodes`, in execution order.
    private let steps: [InvokeStep]
    /// Every node's input and output tensor indices, one allocation the steps point into.
    private let stepIndices: UnsafeMutableBufferPointer<Int>
    private let ownedConstants: [UnsafeMutableRawPointer]
    /// Worker threads for the optimised kernels (created here, once; `registry.threadCount`).
    private let pool: WorkerPool

    /// Threads one invoke uses, the calling thread included.
    public var threadCount: Int { pool.threadCount }

    /// Prepares every node of `model` and allocates the arena.
    /// - Throws: `ModelError` naming the operator and tensor when a node cannot run.
    public init(model: Model, registry: KernelRegistry = KernelRegistry()) throws(ModelError) {
        self.model = model
        self.registry = registry
        pool = WorkerPool(threadCount: registry.resolvedThreadCount)
        let tensors = model.tensors
        let nodeCount = model.operators.count

        // Init + Prepare every node first: it validates and says how much scratch each needs.
        let context = PrepareContext(model: model, registry: registry)
        var prepared: [PreparedNode] = []
        prepared.reserveCapacity(nodeCount)
        for node in model.operators {
            prepared.append(try context.prepare(node))
        }
        // Chains of byte-table operators become one table (optimised kernels only; the fused
        // node's output is then written by the first node of the chain, which the lifetimes
        // below follow).
        prepared = ByteChainFusion.fuse(prepared, graphOutputs: Set(model.outputIndices))

        // Lifetimes: graph inputs and outputs live across the whole invoke; others from their
        // producer to their last consumer.
        var firstUse = [Int](repeating: Int.max, count: tensors.count)
        var lastUse = [Int](repeating: -1, count: tensors.count)
        for input in model.inputIndices {
            firstUse[input] = 0
            lastUse[input] = nodeCount
        }
        for node in prepared {
            for tensor in node.inputs + node.outputs where tensor >= 0 {
                firstUse[tensor] = min(firstUse[tensor], node.index)
                lastUse[tensor] = max(lastUse[tensor], node.index)
            }
        }
        for output in model.outputIndices {
            firstUse[output] = min(firstUse[output], nodeCount)
            lastUse[output] = nodeCount
        }
        var requests: [ArenaPlanner.Request] = []
        for tensor in tensors where !tensor.isConstant && lastUse[tensor.index] >= 0 {
            requests.append(.init(tensor: tensor.index, byteCount: tensor.byteCount,
                                  firstUse: firstUse[tensor.index], lastUse: lastUse[tensor.index]))
        }
        for (index, node) in prepared.enumerated() where node.scratchByteCount > 0 {
            // Scratch lives only while its node runs; it gets a pseudo tensor id after the real ones.
            requests.append(.init(tensor: tensors.count + index, byteCount: node.scratchByteCount,
                                  firstUse: index, lastUse: index))
        }
        let plan = ArenaPlanner.plan(requests)
        guard plan.byteCount <= model.limits.maximumArenaBytes else {
            throw ModelError(.resourceLimit,
                             "the tensor arena would need \(plan.byteCount) bytes, above the limit of \(model.limits.maximumArenaBytes)")
        }
        arenaByteCount = plan.byteCount
        arena = UnsafeMutableRawPointer.allocate(byteCount: max(plan.byteCount, ArenaPlanner.alignment),
                                                 alignment: ArenaPlanner.alignment)
        memset(arena, 0, max(plan.byteCount, ArenaPlanner.alignment))

        var pointers: [UnsafeMutableRawPointer] = []
        var owned: [UnsafeMutableRawPointer] = []
        var copied = 0
        for tensor in tensors {
            if let constant = model.constantBytes(tensor.index), let base = constant.baseAddress {
                let alignment = tensor.elementType.byteSize ?? 1
                if Int(bitPattern: base) % alignment == 0 {
                    pointers.append(UnsafeMutableRawPointer(mutating: base))
                } else {
                    // A misaligned constant (legal in a hand-made file): copy it once, here.
                    let copy = UnsafeMutableRawPointer.allocate(byteCount: max(constant.count, 1), alignment: 16)
                    copy.copyMemory(from: base, byteCount: constant.count)
                    owned.append(copy)
                    copied += constant.count
                    pointers.append(copy)
                }
            } else if let offset = plan.offsets[tensor.index] {
                pointers.append(arena + offset)
            } else {
                pointers.append(arena)  // unused tensor: never read or written
            }
        }
        let table = UnsafeMutableBufferPointer<UnsafeMutableRawPointer>.allocate(capacity: max(pointers.count, 1))
        _ = table.initialize(from: pointers)
        tensorData = table
        ownedConstants = owned
        copiedConstantByteCount = copied

        nodes = prepared
        let arenaBase = arena
        let indexCount = prepared.reduce(0) { $0 + $1.inputs.count + $1.outputs.count }
        let indices = UnsafeMutableBufferPointer<Int>.allocate(capacity: max(indexCount, 1))
        var steps: [InvokeStep] = []
        steps.reserveCapacity(prepared.count)
        var next = 0
        for (index, node) in prepared.enumerated() {
            func store(_ values: [Int]) -> UnsafeBufferPointer<Int> {
                let start = next
                for value in values {
                    indices[next] = value
                    next += 1
                }
                return UnsafeBufferPointer(rebasing: indices[start..<next])
            }
            let inputs = store(node.inputs), outputs = store(node.outputs)
            steps.append(InvokeStep(evaluate: node.evaluate, inputIndices: inputs, outputIndices: outputs,
                                    scratch: plan.offsets[tensors.count + index].map { arenaBase + $0 } ?? arenaBase))
        }
        stepIndices = indices
        self.steps = steps
    }

    deinit {
        tensorData.deallocate()
        stepIndices.deallocate()
        arena.deallocate()
        for pointer in ownedConstants { pointer.deallocate() }
    }

    /// The number of graph inputs.
    public var inputCount: Int { model.inputIndices.count }
    /// The number of graph outputs.
    public var outputCount: Int { model.outputIndices.count }

    /// Input `index`'s description (name, shape, dtype, quantization).
    public func input(_ index: Int) -> TensorInfo { model.tensors[model.inputIndices[index]] }
    /// Output `index`'s description.
    public func output(_ index: Int) -> TensorInfo { model.tensors[model.outputIndices[index]] }

    /// Input `index`'s bytes, to be written in place before `invoke()` (the camera conversion
    /// writes the RGB image straight here). Valid while the interpreter lives; do not keep it
    /// across threads.
    public func inputBytes(_ index: Int) -> UnsafeMutableRawBufferPointer {
        let tensor = model.inputIndices[index]
        return UnsafeMutableRawBufferPointer(start: tensorData[tensor], count: model.tensors[tensor].byteCount)
    }

    /// Output `index`'s bytes after `invoke()`. Valid until the next `invoke()`.
    public func outputBytes(_ index: Int) -> UnsafeRawBufferPointer {
        let tensor = model.outputIndices[index]
        return UnsafeRawBufferPointer(start: tensorData[tensor], count: model.tensors[tensor].byteCount)
    }

    /// Output `index` viewed as `Float`s; nil unless its dtype is float32.
    public func outputFloats(_ index: Int) -> UnsafeBufferPointer<Float>? {
        let info = output(index)
        guard info.elementType == .float32 else { return nil }
        let tensor = model.outputIndices[index]
        return UnsafeBufferPointer(start: tensorData[tensor].assumingMemoryBound(to: Float.self),
                                   count: info.elementCount)
    }

    /// The kernel variant Prepare chose for each node, in execution order.
    public var kernelVariants: [(operatorName: String, variant: KernelVariant)] {
        nodes.map { (operatorName: $0.code.name, variant: $0.variant) }
    }

    /// The kernel each node runs, by name ("reference" or e.g. "conv-gemm-8x16c4-avx512vnni").
    public var kernelNames: [String] { nodes.map(\.kernelName) }

    /// Runs every node once, in order. Allocation-free.
    /// - Throws: `ModelError` of kind `.evaluation` for run-time data a kernel cannot handle
    ///   (a gather index out of range, an integer division by zero).
    public func invoke() throws(ModelError) {
        var service = NoServicePoint()
        var profiler = NoProfiler()
        try evaluateNodes(servicing: &service, profiler: &profiler)
    }

    /// `invoke()` that also adds each node's wall time in nanoseconds (CLOCK_MONOTONIC) to
    /// `nanoseconds[node]`, for `posewatch bench --kernels`. Only this entry point reads the clock:
    /// the frame path's loop is specialised without it. `nanoseconds` needs one element per node.
    public func invoke(addingNodeTimesTo nanoseconds: UnsafeMutableBufferPointer<UInt64>) throws(ModelError) {
        precondition(nanoseconds.count >= nodes.count, "one time slot per node")
        var service = NoServicePoint()
        var profiler = NodeClock(nanoseconds: nanoseconds)
        try evaluateNodes(servicing: &service, profiler: &profiler)
    }

    /// Runs every node once, in order, calling `service` between consecutive operators (see
    /// `InvokeServicePoint`). Allocation-free when the service point is; the outputs are those of
    /// `invoke()`.
    /// - Throws: as `invoke()`.
    public func invoke<Service: InvokeServicePoint & ~Copyable>(servicing service: inout Service) throws(ModelError) {
        var profiler = NoProfiler()
        try evaluateNodes(servicing: &service, profiler: &profiler)
    }

    /// The one invoke loop. Generic, and specialised for each caller, so `invoke()` compiles to
    /// the bare loop: the empty service point and profiler cost nothing.
    @inline(__always)
    private func evaluateNodes<Service: InvokeServicePoint & ~Copyable, Profiler: NodeProfiler>(
        servicing service: inout Service, profiler: inout Profiler
    ) throws(ModelError) {
        let data = UnsafeBufferPointer(tensorData)
        let workers = pool.pointer
        let last = steps.count - 1
        profiler.start()
        for index in steps.indices {
            let step = steps[index]
            let tensors = NodeTensors(data: data, inputIndices: step.inputIndices, outputIndices: step.outputIndices,
                                      scratch: step.scratch, pool: workers)
            if let failure = step.evaluate(tensors) {
                throw ModelError(.evaluation, "\(nodes[index].label): \(failure)")
            }
            profiler.nodeFinished(index)
            if index < last { service.operatorFinished(index) }
        }
    }
}

/// The invoke loop's profiling hook: told when the loop starts and when each node has finished.
protocol NodeProfiler {
    mutating func start()
    mutating func nodeFinished(_ index: Int)
}

/// No profiling (`invoke()`, `invoke(servicing:)`): both calls compile away.
struct NoProfiler: NodeProfiler {
    @inline(__always) mutating func start() {}
    @inline(__always) mutating func nodeFinished(_ index: Int) {}
}

/// Adds each node's wall time (CLOCK_MONOTONIC, nanoseconds) to its slot.
struct NodeClock: NodeProfiler {
    let nanoseconds: UnsafeMutableBufferPointer<UInt64>
    var last: UInt64 = 0

    init(nanoseconds: UnsafeMutableBufferPointer<UInt64>) { self.nanoseconds = nanoseconds }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    mutating func start() { last = Self.now() }

    mutating func nodeFinished(_ index: Int) {
        let now = Self.now()
        nanoseconds[index] &+= now &- last
        last = now
    }
}

/// The service point of `invoke()`: nothing to do between operators.
struct NoServicePoint: InvokeServicePoint {
    @inline(__always) mutating func operatorFinished(_ index: Int) {}
}
