/// One builtin operator as this runtime implements it: the newest version it understands and
/// its Prepare, which checks the node, computes what Eval needs once and returns the node's
/// reference kernel and, when one exists for the node, an optimised kernel.
struct OperatorRegistration: Sendable {
    let code: BuiltinOperator
    let newestVersion: Int
    let prepare: @Sendable (PrepareContext, OperatorNode) throws(ModelError) -> PreparedKernel

    init(_ code: BuiltinOperator, newestVersion: Int,
         prepare: @escaping @Sendable (PrepareContext, OperatorNode) throws(ModelError) -> PreparedKernel) {
        self.code = code
        self.newestVersion = newestVersion
        self.prepare = prepare
    }
}

/// Every operator the runtime supports: the one table the loader (versions) and Prepare read.
///
/// Each operator family lives in one file of `Operators/` with four parts, as tflite-micro keeps
/// each operator in one file: its registration (builtin codes and versions), its parameters and
/// Prepare, its reference kernel (the oracle) and its optimised hook (packing weights or building
/// a table for a CKernels variant, or nothing). To add an operator, write that file and add its
/// registrations to `all` below.
enum OperatorTable {
    static let all: [OperatorRegistration] =
        convolution + fullyConnected + elementwiseBinary + quantize + cast + activations + resizeBilinear
        + argMax + gatherND + reshape + concatenation + pooling + softmax + mean

    /// The registration of each builtin code.
    static let byCode: [BuiltinOperator: OperatorRegistration] = {
        var table: [BuiltinOperator: OperatorRegistration] = [:]
        for registration in all {
            precondition(table[registration.code] == nil, "\(registration.code.name) is registered twice")
            table[registration.code] = registration
        }
        return table
    }()

    /// The newest version of each supported operator.
    static let supportedVersions: [BuiltinOperator: Int] = byCode.mapValues(\.newestVersion)
}
