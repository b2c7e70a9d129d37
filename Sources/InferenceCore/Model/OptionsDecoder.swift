/// Decodes `builtin_options` for the operators posewatch runs, checking the union type.
struct OptionsDecoder {
    let code: BuiltinOperator
    let label: String
    let unionType: UInt8
    let table: FlatTable?

    /// Union member numbers from schema.fbs (1-based, 0 = NONE).
    enum Member: UInt8 {
        case conv2D = 1, depthwiseConv2D = 2, pool2D = 5, fullyConnected = 8, softmax = 9, concatenation = 10,
             add = 11, resizeBilinear = 15, reshape = 17, mul = 21, reducer = 27, sub = 28, div = 29,
             squeeze = 30, argMax = 40, pack = 59, unpack = 64
    }

    /// The options table when present and of the expected member; nil means "all defaults".
    func expect(_ member: Member) throws(ModelError) -> FlatTable? {
        guard let table else { return nil }
        guard unionType == member.rawValue else {
            throw .malformed("\(label): builtin_options has union type \(unionType), expected \(member.rawValue) (\(member))")
        }
        return table
    }

    func activation(_ table: FlatTable?, _ id: Int) throws(ModelError) -> FusedActivation {
        let raw = try table?.scalar(id, "fused_activation_function", default: Int8(0)) ?? 0
        guard let value = FusedActivation(rawValue: raw) else {
            throw .malformed("\(label): unknown fused activation \(raw)")
        }
        return value
    }

    func padding(_ table: FlatTable?) throws(ModelError) -> Padding {
        let raw = try table?.scalar(0, "padding", default: Int8(0)) ?? 0
        guard let value = Padding(rawValue: raw) else { throw .malformed("\(label): unknown padding \(raw)") }
        return value
    }

    func int(_ table: FlatTable?, _ id: Int, _ field: String, default value: Int32) throws(ModelError) -> Int {
        Int(try table?.scalar(id, field, default: value) ?? value)
    }

    func decode() throws(ModelError) -> OperatorOptions {
        switch code {
        case .conv2D:
            // Conv2DOptions: padding 0, stride_w 1, stride_h 2, fused_activation_function 3,
            //                dilation_w_factor 4 (=1), dilation_h_factor 5 (=1), quantized_bias_type 6.
            let t = try expect(.conv2D)
            return .conv2D(padding: try padding(t), strideWidth: try int(t, 1, "stride_w", default: 0),
                           strideHeight: try int(t, 2, "stride_h", default: 0), activation: try activation(t, 3),
                           dilationWidth: try int(t, 4, "dilation_w_factor", default: 1),
                           dilationHeight: try int(t, 5, "dilation_h_factor", default: 1))
        case .depthwiseConv2D:
            // DepthwiseConv2DOptions: padding 0, stride_w 1, stride_h 2, depth_multiplier 3,
            //                         fused_activation_function 4, dilation_w 5 (=1), dilation_h 6 (=1).
            let t = try expect(.depthwiseConv2D)
            return .depthwiseConv2D(padding: try padding(t), strideWidth: try int(t, 1, "stride_w", default: 0),
                                    strideHeight: try int(t, 2, "stride_h", default: 0),
                                    depthMultiplier: try int(t, 3, "depth_multiplier", default: 0),
                                    activation: try activation(t, 4),
                                    dilationWidth: try int(t, 5, "dilation_w_factor", default: 1),
                                    dilationHeight: try int(t, 6, "dilation_h_factor", default: 1))
        case .averagePool2D, .maxPool2D:
            // Pool2DOptions: padding 0, stride_w 1, stride_h 2, filter_width 3, filter_height 4,
            //                fused_activation_function 5.
            let t = try expect(.pool2D)
            return .pool2D(padding: try padding(t), strideWidth: try int(t, 1, "stride_w", default: 0),
                           strideHeight: try int(t, 2, "stride_h", default: 0),
                           filterWidth: try int(t, 3, "filter_width", default: 0),
                           filterHeight: try int(t, 4, "filter_height", default: 0), activation: try activation(t, 5))
        case .fullyConnected:
            // FullyConnectedOptions: fused_activation_function 0, weights_format 1, keep_num_dims 2.
            let t = try expect(.fullyConnected)
            return .fullyConnected(activation: try activation(t, 0),
                                   weightsFormat: try t?.scalar(1, "weights_format", default: Int8(0)) ?? 0,
                                   keepNumDims: try t?.bool(2, "keep_num_dims") ?? false)
        case .softmax:
            // SoftmaxOptions: beta 0 (float).
            let t = try expect(.softmax)
            return .softmax(beta: try t?.float(0, "beta", default: 0) ?? 0)
        case .concatenation:
            // ConcatenationOptions: axis 0, fused_activation_function 1.
            let t = try expect(.concatenation)
            return .concatenation(axis: try int(t, 0, "axis", default: 0), activation: try activation(t, 1))
        case .add: return .activation(try activation(try expect(.add), 0))
        case .sub: return .activation(try activation(try expect(.sub), 0))
        case .mul: return .activation(try activation(try expect(.mul), 0))
        case .div: return .activation(try activation(try expect(.div), 0))
        case .resizeBilinear:
            // ResizeBilinearOptions: new_height 0, new_width 1 (deprecated), align_corners 2,
            //                        half_pixel_centers 3.
            let t = try expect(.resizeBilinear)
            return .resizeBilinear(alignCorners: try t?.bool(2, "align_corners") ?? false,
                                   halfPixelCenters: try t?.bool(3, "half_pixel_centers") ?? false)
        case .reshape:
            // ReshapeOptions: new_shape 0.
            let t = try expect(.reshape)
            return .reshape(newShape: try t?.vector(0, "new_shape", elementSize: 4)?.int32s())
        case .mean:
            // ReducerOptions: keep_dims 0.
            let t = try expect(.reducer)
            return .reducer(keepDims: try t?.bool(0, "keep_dims") ?? false)
        case .squeeze:
            // SqueezeOptions: squeeze_dims 0.
            let t = try expect(.squeeze)
            return .squeeze(dimensions: try t?.vector(0, "squeeze_dims", elementSize: 4)?.int32s() ?? [])
        case .argMax:
            // ArgMaxOptions: output_type 0.
            let t = try expect(.argMax)
            let raw = try t?.scalar(0, "output_type", default: Int8(TensorElementType.int64.rawValue))
                ?? TensorElementType.int64.rawValue
            guard let type = TensorElementType(rawValue: raw) else {
                throw .malformed("\(label): unknown output_type \(raw)")
            }
            return .argMax(outputType: type)
        case .pack:
            // PackOptions: values_count 0, axis 1.
            let t = try expect(.pack)
            return .pack(valuesCount: try int(t, 0, "values_count", default: 0), axis: try int(t, 1, "axis", default: 0))
        case .unpack:
            // UnpackOptions: num 0, axis 1.
            let t = try expect(.unpack)
            return .unpack(count: try int(t, 0, "num", default: 0), axis: try int(t, 1, "axis", default: 0))
        default:
            return .none
        }
    }
}
