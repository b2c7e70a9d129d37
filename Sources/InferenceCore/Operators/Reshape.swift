// RESHAPE, SQUEEZE and EXPAND_DIMS: the same bytes under another shape, copied.

// MARK: registration

extension OperatorTable {
    static let reshape = [
        OperatorRegistration(.reshape, newestVersion: 2) { (context, node) throws(ModelError) in
            try context.prepareReshape(node)
        },
        OperatorRegistration(.squeeze, newestVersion: 2) { (context, node) throws(ModelError) in
            try context.prepareReshape(node)
        },
        OperatorRegistration(.expandDims, newestVersion: 2) { (context, node) throws(ModelError) in
            try context.prepareReshape(node)
        },
    ]
}

// MARK: Prepare

extension PrepareContext {
    func prepareReshape(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        try expectCounts(node, inputs: 1...2, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectSameType(node, input, output)
        guard input.elementCount == output.elementCount else {
            throw fail(node, "cannot reshape \(input.shape) (\(input.elementCount) elements) to \(output.shape)")
        }
        if node.code == .reshape, node.inputs.count == 2, node.inputs[1] >= 0,
            let requested = constantIntegers(info(node.inputs[1]))
        {
            // A -1 entry is inferred; every other entry must match the output tensor.
            guard requested.count == output.shape.count,
                zip(requested, output.shape).allSatisfy({ $0 == -1 || $0 == $1 })
            else {
                throw fail(node, "new shape \(requested) does not match output shape \(output.shape)")
            }
        }
        return copyKernel(byteCount: input.byteCount)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func copyKernel(byteCount: Int) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            tensors.output().copyMemory(from: tensors.input(0), byteCount: byteCount)
            return nil
        })
    }
}

// MARK: optimised kernels: none (the reference kernel runs in every variant)
