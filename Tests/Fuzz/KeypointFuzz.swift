// libFuzzer target over `replay`'s keypoint-file path: any bytes go through the .npy header
// parser and the size check (`NumPyHeader`), and when they accept them, through
// `KeypointFile.check` (shape, dtype, frame limit) and `KeypointFile.pose(fromRow:)` for every row
// (finiteness, rows to poses) — what `KeypointFile(path:)` does through its file window. Any step
// may refuse; none may trap, hang or read out of bounds. An accepted file must give one pose slot
// per row. Built by build.sh as fuzz-keypoints together with the Appliance sources it needs
// (KeypointFile.swift, FrameInput.swift for InputError); seeds in Tests/Fuzz/seeds-npy.
import InferenceCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeypoints(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let header = try? NumPyHeader(parsing: bytes), (try? header.checkDataLength(fileSize: size)) != nil,
          let format = try? KeypointFile.check(header, name: "fuzz.npy") else { return 0 }
    var slots = 0
    for frame in 0..<header.shape[0] {
        let start = format.dataOffset + frame * format.rowByteCount
        let row = UnsafeRawBufferPointer(start: data + start, count: format.rowByteCount)
        guard (try? KeypointFile.pose(fromRow: row, format: format, frame: frame, name: "fuzz.npy")) != nil else { return 0 }
        slots += 1
    }
    if slots != header.shape[0] { fatalError("an accepted keypoint file did not give one slot per row") }
    return 0
}
