// libFuzzer target over `replay`'s keypoint-file path: any bytes go through the .npy parser and,
// when it accepts them, through `KeypointFile(array:name:)` (shape, dtype, finiteness, rows to
// poses). Either step may refuse; neither may trap, hang or read out of bounds. An accepted file
// must give one pose slot per row. Built by build.sh as fuzz-keypoints together with the
// Appliance sources it needs (KeypointFile.swift, FrameInput.swift for InputError); seeds in
// Tests/Fuzz/seeds-npy.
import InferenceCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeypoints(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let array = try? NumPyArray(parsing: Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    guard let file = try? KeypointFile(array: array, name: "fuzz.npy") else { return 0 }
    if file.poses.count != array.shape[0] { fatalError("an accepted keypoint file did not give one slot per row") }
    return 0
}
