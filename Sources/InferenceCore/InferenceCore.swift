// InferenceCore: posewatch's own quantized (int8) inference runtime.
//
// It reads TFLite flatbuffers straight from the memory-mapped file, validates them at load time,
// plans one tensor arena from tensor lifetimes, and runs each operator through Init / Prepare /
// Eval with TFLite's exact integer semantics. Both the pose model (MoveNet Lightning int8) and
// posewatch's action classifier run on it. LiteRT is the test oracle, never a dependency.
//
// Layout:
//   Model/      FlatBuffer (bounds-checked reader), Schema (types from schema.fbs), Model (load +
//               validation, metadata), ModelError
//   Operators/  one file per operator family: its registration (builtin codes, newest versions),
//               parameters and Prepare, reference kernel (the oracle) and optimised hook;
//               OperatorTable is the one list of them
//   Runtime/    Interpreter (arena, the one invoke loop), Prepare (the checks every operator
//               shares), NodeKernel (what Eval runs per node), ArenaPlanner, KernelRegistry
//               (variant choice)
//   Kernels/    FixedPoint and GemmlowpFixedPoint (TFLite/gemmlowp integer math), the
//               ReferenceKernels namespace; Optimized/ (table kernels, ByteChainFusion, the
//               worker pool, each variant's ISA)
//   Files/      NumPyArray (.npy reader/writer)
//
// Typical use (the pose stage):
//
//     let model = try Model(contentsOf: "/usr/share/posewatch/movenet_singlepose_lightning_int8_4.tflite")
//     let interpreter = try Interpreter(model: model)        // Prepare + arena, once
//     let pixels = interpreter.inputBytes(0)                 // uint8[1,192,192,3], write RGB in place
//     ... convert the camera frame straight into `pixels` ...
//     try interpreter.invoke()                               // allocation-free
//     let keypoints = interpreter.outputFloats(0)!           // float32[1,1,17,3]: (y, x, score) × 17
//
// Errors are `ModelError` values with one readable line: malformed files name the table, field and
// offset; unsupported operators their name and version; Prepare the operator, tensor and shapes.
