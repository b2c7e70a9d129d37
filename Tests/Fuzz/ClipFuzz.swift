// libFuzzer target over the clip readers: the bytes are written to a file and opened as a Y4M
// file and as an MJPEG file, the way `posewatch run/replay/snapshot --input` opens them. Each
// source that accepts the header is walked to its end (at most 256 frames) and every frame goes
// through FrameConverter, the app's conversion path (MJPEG frames through libjpeg). Any outcome
// is fine except a trap, a crash, a hang or an ASan report. Built by build.sh as fuzz-clips;
// seeds in Tests/Fuzz/seeds-clips.
import Capture
import LinuxSystem
import Glibc

/// The file the inputs are written to: on tmpfs when there is one, reused for every input.
let clipPath: String = {
    let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(directory)/posewatch-fuzz-clips-\(getpid())"
}()
let clipDescriptor: Int32 = open(clipPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)

/// A small tensor: the conversion code is the same at 192x192, only slower.
let tensorSide = 32

func walk<Source: FrameSource & ~Copyable>(_ source: inout Source) {
    var converter = FrameConverter(tensorWidth: tensorSide, tensorHeight: tensorSide)
    let tensor = UnsafeMutablePointer<UInt8>.allocate(capacity: tensorSide * tensorSide * 3)
    defer { tensor.deallocate() }
    var calls = 0
    while calls < 256 {
        calls += 1
        let outcome = source.nextFrame(timeoutMilliseconds: 0) { frame in
            converter.convert(frame, region: .letterbox, into: tensor) == nil ? .broken : .used
        }
        if outcome == .endOfStream { break }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClips(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    precondition(clipDescriptor >= 0, "cannot create \(clipPath)")
    precondition(ftruncate(clipDescriptor, 0) == 0 && pwrite(clipDescriptor, data, size, 0) == size, "cannot write \(clipPath)")
    if var y4m = try? Y4MFileSource(path: clipPath) {
        if let layout = y4m.layout {
            precondition(FrameLayout.dimensionRange.contains(layout.width) && FrameLayout.dimensionRange.contains(layout.height))
        }
        precondition(y4m.frameInterval.framesPerSecond >= 1 && y4m.frameInterval.framesPerSecond <= 240)
        walk(&y4m)
    }
    if var mjpeg = try? MJPEGFileSource(path: clipPath, framesPerSecond: 15) {
        walk(&mjpeg)
    }
    return 0
}
