// CAST between float32, int32, int64, int16, int8, uint8 and bool (C++ static_cast semantics);
// from an 8-bit input the optimised hook makes a 256-entry table.

// MARK: registration

extension OperatorTable {
    static let cast = [
        OperatorRegistration(.cast, newestVersion: 6) { (context, node) throws(ModelError) in
            try context.prepareCast(node)
        },
    ]
}

// MARK: Prepare

extension PrepareContext {
    func prepareCast(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        let types: [TensorElementType] = [.float32, .int32, .uint8, .int8, .int64, .bool, .int16]
        guard types.contains(input.elementType), types.contains(output.elementType) else {
            throw unsupported(node, "cast from \(input.elementType) to \(output.elementType) is not supported")
        }
        try expectShape(node, output, "output", input.shape)
        return castKernel(count: input.elementCount, from: input.elementType, to: output.elementType)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func castKernel(count: Int, from: TensorElementType, to: TensorElementType) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.cast(count: count, from: from, to: to, input: tensors.input(0), output: tensors.output())
            return nil
        }, optimized: optimizedVariant.flatMap { OptimizedKernel.cast(count: count, from: from, to: to, variant: $0) })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    @inline(__always)
    static func loadAsDouble(_ pointer: UnsafeRawPointer, _ i: Int, _ type: TensorElementType) -> Double {
        switch type {
        case .float32: Double(pointer.load(fromByteOffset: i * 4, as: Float.self))
        case .int32: Double(pointer.load(fromByteOffset: i * 4, as: Int32.self))
        case .uint8: Double(pointer.load(fromByteOffset: i, as: UInt8.self))
        case .int8: Double(pointer.load(fromByteOffset: i, as: Int8.self))
        case .int16: Double(pointer.load(fromByteOffset: i * 2, as: Int16.self))
        case .int64: Double(pointer.load(fromByteOffset: i * 8, as: Int64.self))
        default: pointer.load(fromByteOffset: i, as: UInt8.self) != 0 ? 1 : 0
        }
    }

    @inline(__always)
    static func loadAsInt64(_ pointer: UnsafeRawPointer, _ i: Int, _ type: TensorElementType) -> Int64 {
        switch type {
        case .int32: Int64(pointer.load(fromByteOffset: i * 4, as: Int32.self))
        case .uint8: Int64(pointer.load(fromByteOffset: i, as: UInt8.self))
        case .int8: Int64(pointer.load(fromByteOffset: i, as: Int8.self))
        case .int16: Int64(pointer.load(fromByteOffset: i * 2, as: Int16.self))
        case .int64: pointer.load(fromByteOffset: i * 8, as: Int64.self)
        default: pointer.load(fromByteOffset: i, as: UInt8.self) != 0 ? 1 : 0
        }
    }

    /// CAST: C++ static_cast semantics. Integers → float round to nearest; float → integer truncates
    /// toward zero (saturating instead of C++'s undefined behaviour); integer → narrower integer wraps.
    static func cast(count: Int, from: TensorElementType, to: TensorElementType, input: UnsafeRawPointer,
                     output: UnsafeMutableRawPointer)
    {
        for i in 0..<count {
            switch to {
            case .float32:
                let value: Float = from == .float32 ? input.load(fromByteOffset: i * 4, as: Float.self)
                    : from == .int64 ? Float(input.load(fromByteOffset: i * 8, as: Int64.self))
                    : Float(loadAsInt64(input, i, from))
                output.storeBytes(of: value, toByteOffset: i * 4, as: Float.self)
            case .bool:
                output.storeBytes(of: loadAsDouble(input, i, from) != 0 ? 1 : 0, toByteOffset: i, as: UInt8.self)
            default:
                let value: Int64
                if from == .float32 {
                    value = Int64(saturatingInt32(input.load(fromByteOffset: i * 4, as: Float.self)))
                } else {
                    value = loadAsInt64(input, i, from)
                }
                switch to {
                case .int32: output.storeBytes(of: Int32(truncatingIfNeeded: value), toByteOffset: i * 4, as: Int32.self)
                case .uint8: output.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: i, as: UInt8.self)
                case .int8: output.storeBytes(of: Int8(truncatingIfNeeded: value), toByteOffset: i, as: Int8.self)
                case .int16: output.storeBytes(of: Int16(truncatingIfNeeded: value), toByteOffset: i * 2, as: Int16.self)
                default: output.storeBytes(of: value, toByteOffset: i * 8, as: Int64.self)
                }
            }
        }
    }
}

// MARK: optimised kernels

extension OptimizedKernel {
    /// CAST from 8-bit integers to 1-, 2- or 4-byte types as a 256-entry table.
    static func cast(count: Int, from: TensorElementType, to: TensorElementType, variant: KernelVariant)
        -> OptimizedKernel?
    {
        guard variant.hasOptimizedKernels, from == .int8 || from == .uint8, let size = to.byteSize,
              [1, 2, 4].contains(size)
        else { return nil }
        return byteTable(entryBytes: size, count: count, variant: variant, name: "cast-table") {
            ReferenceKernels.cast(count: 256, from: from, to: to, input: $0, output: $1)
        }
    }
}
