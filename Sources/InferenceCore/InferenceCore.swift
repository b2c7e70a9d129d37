// InferenceCore: posewatch's own quantized (int8) inference runtime.
//
// It reads TFLite flatbuffers straight from the memory-mapped file, validates them at load time,
// plans one tensor arena from tensor lifetimes, and runs each operator through Init / Prepare /
// Eval with TFLite's exact integer semantics. Both the pose model (MoveNet Lightning int8) and
// posewatch's action classifier run on it. LiteRT is the test oracle, never a dependency.
