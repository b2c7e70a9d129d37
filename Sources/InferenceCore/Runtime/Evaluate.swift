extension PreparedNode {
    /// Eval: runs the prepared kernel on the tensors' memory. Reads only what Prepare computed.
    @inline(__always)
    func evaluate(_ data: UnsafeBufferPointer<UnsafeMutableRawPointer>, scratch: UnsafeMutableRawPointer,
                  pool: OpaquePointer? = nil) throws(ModelError) {
        @inline(__always) func input(_ position: Int) -> UnsafeRawPointer { UnsafeRawPointer(data[inputs[position]]) }
        @inline(__always) func output(_ position: Int = 0) -> UnsafeMutableRawPointer { data[outputs[position]] }
        @inline(__always) func optionalInput(_ position: Int) -> UnsafeRawPointer? {
            position < inputs.count && inputs[position] >= 0 ? UnsafeRawPointer(data[inputs[position]]) : nil
        }

        if let optimized {
            optimized.run(input: input(0), secondInput: inputs.count > 1 ? optionalInput(1) : nil, output: output(),
                          pool: pool)
            return
        }
        switch kernel {
        case .conv2DInt8(let p):
            ReferenceKernels.conv2DPerChannelInt8(
                p, input: input(0).assumingMemoryBound(to: Int8.self), filter: input(1).assumingMemoryBound(to: Int8.self),
                bias: p.hasBias ? optionalInput(2)?.assumingMemoryBound(to: Int32.self) : nil,
                output: output().assumingMemoryBound(to: Int8.self))
        case .depthwiseConv2DInt8(let p):
            ReferenceKernels.depthwiseConv2DPerChannelInt8(
                p, input: input(0).assumingMemoryBound(to: Int8.self), filter: input(1).assumingMemoryBound(to: Int8.self),
                bias: p.hasBias ? optionalInput(2)?.assumingMemoryBound(to: Int32.self) : nil,
                output: output().assumingMemoryBound(to: Int8.self))
        case .fullyConnectedInt8(let p):
            ReferenceKernels.fullyConnectedInt8(
                p, input: input(0).assumingMemoryBound(to: Int8.self), filter: input(1).assumingMemoryBound(to: Int8.self),
                bias: p.hasBias ? optionalInput(2)?.assumingMemoryBound(to: Int32.self) : nil,
                output: output().assumingMemoryBound(to: Int8.self))
        case .addSubInt8(let p):
            ReferenceKernels.addSubInt8(p, input(0).assumingMemoryBound(to: Int8.self),
                                        input(1).assumingMemoryBound(to: Int8.self),
                                        output().assumingMemoryBound(to: Int8.self))
        case .mulInt8(let p):
            ReferenceKernels.mulInt8(p, input(0).assumingMemoryBound(to: Int8.self),
                                     input(1).assumingMemoryBound(to: Int8.self),
                                     output().assumingMemoryBound(to: Int8.self))
        case .binaryInt32(let operation, let plan, let range):
            let ok = ReferenceKernels.binaryInt32(operation, plan, range, input(0).assumingMemoryBound(to: Int32.self),
                                                  input(1).assumingMemoryBound(to: Int32.self),
                                                  output().assumingMemoryBound(to: Int32.self))
            if !ok { throw ModelError(.evaluation, "\(label): division by zero") }
        case .binaryFloat(let operation, let plan, let range):
            ReferenceKernels.binaryFloat(operation, plan, range, input(0).assumingMemoryBound(to: Float.self),
                                         input(1).assumingMemoryBound(to: Float.self),
                                         output().assumingMemoryBound(to: Float.self))
        case .quantizeFloat(let count, let scale, let zeroPoint, let outputType):
            ReferenceKernels.affineQuantize(count: count, scale: scale, zeroPoint: zeroPoint, outputType: outputType,
                                            input: input(0).assumingMemoryBound(to: Float.self), output: output())
        case .requantize(let p):
            ReferenceKernels.requantize(p, input: input(0), output: output())
        case .dequantize(let count, let scale, let zeroPoint, let inputType):
            ReferenceKernels.dequantize(count: count, scale: scale, zeroPoint: zeroPoint, inputType: inputType,
                                        input: input(0), output: output().assumingMemoryBound(to: Float.self))
        case .cast(let count, let from, let to):
            ReferenceKernels.cast(count: count, from: from, to: to, input: input(0), output: output())
        case .lookupTable(let count, let table):
            ReferenceKernels.lookup(count: count, table: table, input: input(0).assumingMemoryBound(to: UInt8.self),
                                    output: output().assumingMemoryBound(to: UInt8.self))
        case .unaryFloat(let operation, let count):
            ReferenceKernels.unaryFloat(operation, count: count, input: input(0).assumingMemoryBound(to: Float.self),
                                        output: output().assumingMemoryBound(to: Float.self))
        case .reluQuantized(let count, let type, let inputZeroPoint, let outputZeroPoint, let multiplier, let range):
            ReferenceKernels.reluQuantized(count: count, type: type, inputZeroPoint: inputZeroPoint,
                                           outputZeroPoint: outputZeroPoint, multiplier: multiplier, range: range,
                                           input: input(0), output: output())
        case .resizeBilinearInteger(let p, let type):
            if type == .int8 {
                ReferenceKernels.resizeBilinearInteger(p, input: input(0).assumingMemoryBound(to: Int8.self),
                                                       output: output().assumingMemoryBound(to: Int8.self))
            } else {
                ReferenceKernels.resizeBilinearInteger(p, input: input(0).assumingMemoryBound(to: UInt8.self),
                                                       output: output().assumingMemoryBound(to: UInt8.self))
            }
        case .argMax(let p):
            ReferenceKernels.argMax(p, input: input(0), output: output())
        case .gatherND(let p):
            if !ReferenceKernels.gatherND(p, params: input(0), indices: input(1), output: output()) {
                throw ModelError(.evaluation, "\(label): an index is out of range of the params tensor")
            }
        case .copy(let byteCount):
            output().copyMemory(from: input(0), byteCount: byteCount)
        case .concatenate(let p):
            var offset = 0
            for position in 0..<p.chunkBytes.count {
                let chunk = p.chunkBytes[position]
                let source = input(position)
                for row in 0..<p.outer {
                    (output() + row * p.rowBytes + offset).copyMemory(from: source + row * chunk, byteCount: chunk)
                }
                offset += chunk
            }
        case .split(let p):
            var offset = 0
            let source = input(0)
            for position in 0..<p.chunkBytes.count {
                let chunk = p.chunkBytes[position]
                let destination = output(position)
                for row in 0..<p.outer {
                    (destination + row * chunk).copyMemory(from: source + row * p.rowBytes + offset, byteCount: chunk)
                }
                offset += chunk
            }
        case .averagePoolInt8(let p):
            ReferenceKernels.averagePoolInt8(p, input: input(0).assumingMemoryBound(to: Int8.self),
                                             output: output().assumingMemoryBound(to: Int8.self))
        case .maxPoolInt8(let p):
            ReferenceKernels.maxPoolInt8(p, input: input(0).assumingMemoryBound(to: Int8.self),
                                         output: output().assumingMemoryBound(to: Int8.self))
        case .softmaxFloat(let outer, let depth, let beta):
            ReferenceKernels.softmaxFloat(outer: outer, depth: depth, beta: beta,
                                          input: input(0).assumingMemoryBound(to: Float.self),
                                          output: output().assumingMemoryBound(to: Float.self))
        case .softmaxInt8(let p):
            ReferenceKernels.softmaxInt8(p, input: input(0).assumingMemoryBound(to: Int8.self),
                                         output: output().assumingMemoryBound(to: Int8.self))
        case .mean(let p):
            ReferenceKernels.mean(p, input: input(0), output: output(), scratch: scratch)
        }
    }

    /// Bytes of scratch memory Eval needs (planned in the arena, alive only during this node).
    var scratchByteCount: Int {
        if case .mean(let p) = kernel { return p.outputCount * 4 }
        return 0
    }

    var label: String { "operator \(index) (\(code.name))" }
}
