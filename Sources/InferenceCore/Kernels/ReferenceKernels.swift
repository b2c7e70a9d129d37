/// The reference kernels: pure functions of their explicit inputs, no allocation, TFLite's exact
/// integer semantics. Quantized values relate to reals by `real = scale × (q − zero_point)`.
/// They are the oracle for any optimized variant. Each operator's kernels are in its file under
/// `Operators/` (an extension of this namespace).
enum ReferenceKernels {}
