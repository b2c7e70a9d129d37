import CKernels

/// The memory one node reads and writes during Eval: the interpreter's tensor pointer table and
/// the node's tensor indices, its planned scratch and the worker pool. Built per node by the
/// invoke loop from pointers only (no reference counting, no allocation).
struct NodeTensors {
    let data: UnsafeBufferPointer<UnsafeMutableRawPointer>
    /// The node's input tensor indices (−1: an omitted optional input).
    let inputIndices: UnsafeBufferPointer<Int>
    let outputIndices: UnsafeBufferPointer<Int>
    /// Scratch planned in the arena for this node (`PreparedKernel.scratchByteCount` bytes).
    let scratch: UnsafeMutableRawPointer
    /// The interpreter's worker pool (nil: run on the calling thread only).
    let pool: OpaquePointer?

    /// Input `position`'s memory (the caller's Prepare checked that it is present).
    @inline(__always) func input(_ position: Int) -> UnsafeRawPointer { UnsafeRawPointer(data[inputIndices[position]]) }
    @inline(__always) func output(_ position: Int = 0) -> UnsafeMutableRawPointer { data[outputIndices[position]] }
    /// Input `position`'s memory, or nil when the node omits it (an optional bias).
    @inline(__always) func optionalInput(_ position: Int) -> UnsafeRawPointer? {
        position < inputIndices.count && inputIndices[position] >= 0 ? UnsafeRawPointer(data[inputIndices[position]]) : nil
    }
    /// `input(1)` for binary operators, nil for unary ones.
    @inline(__always) var secondInput: UnsafeRawPointer? { inputIndices.count > 1 ? optionalInput(1) : nil }
}

/// Eval for one node: reads only what its Prepare captured, writes the node's outputs, allocates
/// nothing. Returns nil, or why this invoke's data cannot be evaluated (an integer division by
/// zero, a gather index out of range); the interpreter turns that into a `ModelError` naming the
/// node. A static string, so the common path builds no message.
typealias NodeEvaluation = (NodeTensors) -> StaticString?

/// An optimised kernel for one node (SIMD tile, worker pool, pre-packed weights or a table), made
/// by its operator's optimised hook at Prepare. Whatever C memory it uses is owned by objects its
/// `evaluate` closure captures, so it lives exactly as long as the node.
struct OptimizedKernel {
    /// XNNPACK-style name: operator, tile, ISA (e.g. "conv-gemm-8x16c4-avx512vnni").
    let name: String
    let variant: KernelVariant
    let evaluate: NodeEvaluation
    /// The 256-entry table a byte-table kernel looks up (ByteChainFusion extends chains of them).
    var byteTable: ByteTable? = nil
}

/// What an operator's Prepare hands the interpreter for one node.
struct PreparedKernel {
    /// The reference kernel with this node's parameters: the oracle, and what runs when no
    /// optimised kernel exists for the node (or the registry forbids them).
    let reference: NodeEvaluation
    /// The optimised kernel for `PrepareContext.optimizedVariant`, nil when there is none.
    var optimized: OptimizedKernel? = nil
    /// Bytes of arena scratch Eval needs (alive only while this node runs).
    var scratchByteCount = 0
    /// This node's reference computation as a function of a run of elements, for unary
    /// element-wise operators that ByteChainFusion may fold into the table before them.
    var elementwise: ElementwiseStage? = nil
}

/// A unary element-wise reference kernel applied to `count` consecutive elements.
struct ElementwiseStage {
    /// Elements the node processes.
    let count: Int
    /// Bytes of one input element the stage reads (4: float, 1: an 8-bit code).
    let inputElementBytes: Int
    /// Bytes of one output element it writes.
    let outputElementBytes: Int
    /// The reference kernel on `count` elements from `input` into `output`.
    let apply: (_ count: Int, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) -> Void
}

/// One node after Prepare: the kernel that runs and what the interpreter plans around it.
struct PreparedNode {
    let index: Int
    let code: BuiltinOperator
    let inputs: [Int]
    let outputs: [Int]
    let variant: KernelVariant
    /// "reference", or the optimised kernel's name.
    let kernelName: String
    let evaluate: NodeEvaluation
    let scratchByteCount: Int
    let elementwise: ElementwiseStage?
    let byteTable: ByteTable?

    init(_ node: OperatorNode, _ kernel: PreparedKernel) {
        index = node.index
        code = node.code
        inputs = node.inputs
        outputs = node.outputs
        variant = kernel.optimized?.variant ?? .reference
        kernelName = kernel.optimized?.name ?? "reference"
        evaluate = kernel.optimized?.evaluate ?? kernel.reference
        scratchByteCount = kernel.scratchByteCount
        elementwise = kernel.elementwise
        byteTable = kernel.optimized?.byteTable
    }

    /// `node` running `optimized` in place of what it ran (ByteChainFusion), outputs `outputs`.
    init(_ node: PreparedNode, running optimized: OptimizedKernel, outputs: [Int]) {
        index = node.index
        code = node.code
        inputs = node.inputs
        self.outputs = outputs
        variant = optimized.variant
        kernelName = optimized.name
        evaluate = optimized.evaluate
        scratchByteCount = node.scratchByteCount
        elementwise = node.elementwise
        byteTable = optimized.byteTable
    }

    var label: String { "operator \(index) (\(code.name))" }
}

/// What the invoke loop needs of one node, and nothing else: its evaluation and where its
/// tensor indices and scratch are (inside memory the interpreter owns).
struct InvokeStep {
    let evaluate: NodeEvaluation
    let inputIndices: UnsafeBufferPointer<Int>
    let outputIndices: UnsafeBufferPointer<Int>
    let scratch: UnsafeMutableRawPointer
}
