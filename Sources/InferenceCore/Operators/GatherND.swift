// GATHER_ND with int32/int64 indices; constant indices are range-checked at Prepare.

// MARK: registration

extension OperatorTable {
    static let gatherND = [
        OperatorRegistration(.gatherND, newestVersion: 5) { (context, node) throws(ModelError) in
            try context.prepareGatherND(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// GATHER_ND: slices of `sliceBytes` picked by index tuples of length `indexDepth`.
struct GatherNDParameters: Sendable {
    var sliceCount = 0, indexDepth = 0, sliceBytes = 0, paramsBytes = 0
    /// Bytes to step per unit of each index component.
    var byteStrides: [Int] = []
    var indicesAreInt64 = false

    /// The byte offset in params of slice `slice`'s source, or nil when its indices point outside
    /// params (as TFLite's reference GatherNd, the whole slice must lie inside the flat params
    /// tensor). One rule for Eval and for Prepare's check of constant indices; the arithmetic
    /// reports overflow, so an index near Int64.max is out of range, not a trap.
    @inline(__always)
    func sourceOffset(ofSlice slice: Int, indices: UnsafeRawPointer) -> Int? {
        var from = 0
        for component in 0..<indexDepth {
            let position = slice * indexDepth + component
            let index = indicesAreInt64
                ? Int(truncatingIfNeeded: indices.loadUnaligned(fromByteOffset: position * 8, as: Int64.self))
                : Int(indices.loadUnaligned(fromByteOffset: position * 4, as: Int32.self))
            let step = index.multipliedReportingOverflow(by: byteStrides[component])
            let sum = from.addingReportingOverflow(step.partialValue)
            guard !step.overflow, !sum.overflow else { return nil }
            from = sum.partialValue
        }
        guard from >= 0, from <= paramsBytes - sliceBytes else { return nil }
        return from
    }
}

// MARK: Prepare

extension PrepareContext {
    func prepareGatherND(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let params = try inputInfo(node, 0), indices = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, indices, "indices", .int32, .int64)
        try expectSameType(node, params, output, inputRole: "params")
        guard let depth = indices.shape.last, indices.shape.count >= 1, depth >= 1, depth <= params.shape.count else {
            throw fail(node, "indices shape \(indices.shape) does not fit params shape \(params.shape)")
        }
        let expected = Array(indices.shape.dropLast()) + Array(params.shape[depth...])
        try expectShape(node, output, "output", expected)
        let elementSize = params.elementType.byteSize ?? 1
        var p = GatherNDParameters()
        p.indexDepth = depth
        p.sliceCount = product(indices.shape.dropLast()[...])
        p.sliceBytes = product(params.shape[depth...]) * elementSize
        p.paramsBytes = params.byteCount
        p.byteStrides = (0..<depth).map { product(params.shape[($0 + 1)...]) * elementSize }
        p.indicesAreInt64 = indices.elementType == .int64
        // Constant indices are checked once here, so a model whose file points a gather outside
        // its params is refused at load instead of failing every invoke.
        if let constant = model.constantBytes(indices.index), let base = constant.baseAddress {
            for slice in 0..<p.sliceCount where p.sourceOffset(ofSlice: slice, indices: base) == nil {
                throw fail(node, "constant index \(slice) points outside the params tensor \(params.shape)")
            }
        }
        return gatherNDKernel(p)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func gatherNDKernel(_ p: GatherNDParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.gatherND(p, params: tensors.input(0), indices: tensors.input(1), output: tensors.output())
                ? nil : "an index is out of range of the params tensor"
        })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// GATHER_ND: for each index tuple, copy the slice it selects. Like TFLite, only the slice's
    /// flat start is range-checked (which is what keeps memory safe). Returns false when a slice
    /// would fall outside `params`.
    static func gatherND(_ p: GatherNDParameters, params: UnsafeRawPointer, indices: UnsafeRawPointer,
                         output: UnsafeMutableRawPointer) -> Bool
    {
        for slice in 0..<p.sliceCount {
            guard let from = p.sourceOffset(ofSlice: slice, indices: indices) else { return false }
            (output + slice * p.sliceBytes).copyMemory(from: params + from, byteCount: p.sliceBytes)
        }
        return true
    }
}

// MARK: optimised kernels: none (the reference kernel runs in every variant)
