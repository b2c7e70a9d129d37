// Capture benchmark: the frame loop's capture path (poll, drain-to-newest DQBUF, QBUF) over an
// in-memory driver, plus conversion into a 192×192 RGB tensor. Reports milliseconds and heap
// allocations per frame; allocations are counted by CMallocCounter's interposed malloc.
//
//   swift run -c release CaptureBenchmark [frames] [--mjpeg file.mjpeg] [--only yuyv|nv12|yuv420]
//
// --only runs that one capture+convert case and nothing else (Tests/Benchmarks/arm64_instructions.sh
// counts its instructions at N and 2N frames under qemu-aarch64).
import CMallocCounter
import CV4L2
import Capture
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// An in-memory V4L2 driver: a fixed ring of pre-rendered frames, two frames ready per grab
/// (so drain-to-newest re-queues one every time), fixed-size queues (no allocation).
final class InMemoryDriver: V4L2SystemCalls {
    let layout: FrameLayout
    let frameBytes: Int
    var buffers: [UnsafeMutableRawPointer?] = Array(repeating: nil, count: 8)
    // Driver-held buffers, FIFO, and ready (filled) buffers, FIFO; capacity 8 each.
    var held = [Int](repeating: 0, count: 8), heldStart = 0, heldCount = 0
    var ready = [Int](repeating: 0, count: 8), readyStart = 0, readyCount = 0
    var sequence: UInt32 = 0

    init(layout: FrameLayout) {
        self.layout = layout
        frameBytes = layout.minimumByteCount
    }

    /// The driver fills the oldest held buffer (its content is already a rendered frame).
    func produce() {
        guard heldCount > 0 else { return }
        let index = held[heldStart]
        heldStart = (heldStart + 1) % 8; heldCount -= 1
        ready[(readyStart + readyCount) % 8] = index; readyCount += 1
    }

    func open(_ path: String, flags: Int32) -> Int32 { 42 }
    func close(_ fd: Int32) -> Int32 { 0 }
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        switch request {
        case PW_VIDIOC_QUERYCAP:
            argument.assumingMemoryBound(to: v4l2_capability.self).pointee.capabilities = UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING)
        case PW_VIDIOC_ENUM_FMT:
            let description = argument.assumingMemoryBound(to: v4l2_fmtdesc.self)
            guard description.pointee.index == 0 else { errno = EINVAL; return -1 }
            description.pointee.pixelformat = layout.pixelFormat.fourCC.rawValue
        case PW_VIDIOC_ENUM_FRAMESIZES:
            let size = argument.assumingMemoryBound(to: v4l2_frmsizeenum.self)
            guard size.pointee.index == 0 else { errno = EINVAL; return -1 }
            size.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
            size.pointee.discrete = v4l2_frmsize_discrete(width: UInt32(layout.width), height: UInt32(layout.height))
        case PW_VIDIOC_ENUM_FRAMEINTERVALS:
            let interval = argument.assumingMemoryBound(to: v4l2_frmivalenum.self)
            guard interval.pointee.index == 0 else { errno = EINVAL; return -1 }
            interval.pointee.type = V4L2_FRMIVAL_TYPE_DISCRETE.rawValue
            interval.pointee.discrete = v4l2_fract(numerator: 1, denominator: 30)
        case PW_VIDIOC_S_FMT:
            let format = argument.assumingMemoryBound(to: v4l2_format.self)
            format.pointee.fmt.pix.bytesperline = UInt32(layout.bytesPerLine)
            format.pointee.fmt.pix.sizeimage = UInt32(frameBytes)
        case PW_VIDIOC_S_PARM:
            argument.assumingMemoryBound(to: v4l2_streamparm.self).pointee.parm.capture.capability = UInt32(V4L2_CAP_TIMEPERFRAME)
        case PW_VIDIOC_REQBUFS:
            argument.assumingMemoryBound(to: v4l2_requestbuffers.self).pointee.count = 5
        case PW_VIDIOC_QUERYBUF:
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            buffer.pointee.length = UInt32(frameBytes)
            buffer.pointee.m.offset = buffer.pointee.index
        case PW_VIDIOC_QBUF:
            held[(heldStart + heldCount) % 8] = Int(argument.assumingMemoryBound(to: v4l2_buffer.self).pointee.index)
            heldCount += 1
        case PW_VIDIOC_DQBUF:
            guard readyCount > 0 else { errno = EAGAIN; return -1 }
            let index = ready[readyStart]
            readyStart = (readyStart + 1) % 8; readyCount -= 1
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            buffer.pointee.index = UInt32(index)
            buffer.pointee.bytesused = UInt32(frameBytes)
            buffer.pointee.sequence = sequence
            buffer.pointee.flags = UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
            let now = MonotonicInstant.now().nanoseconds
            buffer.pointee.timestamp = timeval(tv_sec: Int(now / 1_000_000_000), tv_usec: Int(now % 1_000_000_000 / 1000))
            sequence += 1
        case PW_VIDIOC_STREAMON, PW_VIDIOC_STREAMOFF:
            break
        default:
            errno = ENOTTY
            return -1
        }
        return 0
    }
    func mapBuffer(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer? {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 64)
        // Each buffer holds a different frame of the synthetic pattern.
        var source = SyntheticSource(format: layout.pixelFormat, width: layout.width, height: layout.height)
        for _ in 0...Int(offset) {
            _ = source.nextFrame(timeoutMilliseconds: 0) { frame in
                buffer.copyMemory(from: frame.bytes.baseAddress!, byteCount: min(length, frame.bytes.count))
                return .used
            }
        }
        buffers[Int(offset)] = buffer
        return buffer
    }
    func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) -> Int32 { address.deallocate(); return 0 }
    func poll(_ fd: Int32, events: Int16, returnedEvents: inout Int16, timeoutMilliseconds: Int32) -> Int32 {
        if readyCount == 0 { return 0 }
        returnedEvents = Int16(POLLIN)
        return 1
    }
    func now() -> MonotonicInstant { .now() }
    func sleep(milliseconds: Int32) {}
}

/// CPU time this thread has used (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
func threadCPUNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

struct Measurement {
    var name: String
    var frames: Int
    var nanoseconds: Int64
    var allocations: UInt64
    var delivered: Int

    func report() {
        let milliseconds = Double(nanoseconds) / Double(frames) / 1e6
        let perFrame = Double(allocations) / Double(frames)
        let ms = (milliseconds * 1000).rounded() / 1000
        print("\(name): \(ms) ms/frame, \(allocations) allocations in \(frames) frames (\(perFrame) per frame), \(delivered) delivered")
    }
}

/// Runs `body` `warmUp` times unmeasured, then `frames` times measured.
@inline(never)
func measure(_ name: String, frames: Int, warmUp: Int = 50, delivered: () -> Int, _ body: () -> Void) -> Measurement {
    for _ in 0..<warmUp { body() }
    let before = delivered()
    let allocationsBefore = pw_allocation_count()
    let start = MonotonicInstant.now()
    for _ in 0..<frames { body() }
    let elapsed = (MonotonicInstant.now() - start).nanoseconds
    let allocations = pw_allocation_count() - allocationsBefore
    return Measurement(name: name, frames: frames, nanoseconds: elapsed, allocations: allocations, delivered: delivered() - before)
}

let arguments = CommandLine.arguments
let frames = arguments.dropFirst().first.flatMap { Int($0) } ?? 2000
let mjpegPath = arguments.firstIndex(of: "--mjpeg").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
let onlyFormat = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
let formatNames: [(PixelFormat, String)] = [(.yuyv, "yuyv"), (.nv12, "nv12"), (.yuv420, "yuv420")]
let formats = formatNames.filter { onlyFormat == nil || $0.1 == onlyFormat }.map(\.0)
precondition(!formats.isEmpty, "--only takes yuyv, nv12 or yuv420")

let tensor = UnsafeMutablePointer<UInt8>.allocate(capacity: 192 * 192 * 3)
defer { tensor.deallocate() }
print("posewatch capture benchmark: 192x192 RGB tensor, letterbox, \(frames) frames per case")

for format in formats {
    let layout = FrameLayout(pixelFormat: format, width: 640, height: 480)
    let driver = InMemoryDriver(layout: layout)
    var camera = CameraSource(configuration: CameraConfiguration(device: "/dev/bench", request: CaptureRequest(framesPerSecond: 30)),
                              calls: driver)
    var converter = FrameConverter(tensorWidth: 192, tensorHeight: 192)
    precondition(camera.isStreaming, "the in-memory camera did not open: \(String(describing: camera.lastError))")
    let result = measure("capture+convert \(format) 640x480 (mock V4L2, drain 2→1)", frames: frames, delivered: { camera.statistics.delivered }) {
        driver.produce()
        driver.produce()
        let outcome = camera.nextFrame(timeoutMilliseconds: 0) { frame in
            converter.convert(frame, region: .letterbox, into: tensor) == nil ? .broken : .used
        }
        precondition(outcome == .frame)
    }
    result.report()
    let statistics = camera.statistics
    print("  statistics: delivered \(statistics.delivered), dropped late \(statistics.droppedLate), broken \(statistics.broken)")
}

if onlyFormat == nil {
    var synthetic = SyntheticSource(format: .yuyv, width: 640, height: 480)
    var converter = FrameConverter(tensorWidth: 192, tensorHeight: 192)
    let crop = FrameRectangle(x: 160, y: 80, width: 320, height: 320)
    measure("synthetic YUYV 640x480 render+convert (crop 320x320)", frames: frames / 4, delivered: { synthetic.statistics.delivered }) {
        _ = synthetic.nextFrame(timeoutMilliseconds: 0) { frame in
            converter.convert(frame, region: .crop(crop), into: tensor) == nil ? .broken : .used
        }
    }.report()
}

if let mjpegPath {
    do {
        var source = try MJPEGFileSource(path: mjpegPath)
        var converter = FrameConverter(tensorWidth: 192, tensorHeight: 192, expectedJPEGSize: (640, 480))
        var count = 0
        while count < 3, source.nextFrame(timeoutMilliseconds: 0, { _ in .used }) != .endOfStream { count += 1 }
        var all = try MJPEGFileSource(path: mjpegPath)
        var measured = 0
        let start = MonotonicInstant.now()
        let cpuStart = threadCPUNanoseconds()
        let allocationsBefore = pw_allocation_count()
        while all.nextFrame(timeoutMilliseconds: 0, { frame in
            converter.convert(frame, region: .letterbox, into: tensor) == nil ? .broken : .used
        }) != .endOfStream { measured += 1 }
        let elapsed = (MonotonicInstant.now() - start).nanoseconds
        let cpu = threadCPUNanoseconds() - cpuStart
        let layout = all.layout!
        Measurement(name: "MJPEG \(layout.width)x\(layout.height) decode+convert (\(mjpegPath))", frames: max(measured, 1),
                    nanoseconds: elapsed, allocations: pw_allocation_count() - allocationsBefore, delivered: all.statistics.delivered).report()
        // CPU time as well as wall time: on a shared machine it is the figure that repeats.
        let cpuMilliseconds = (Double(cpu) / Double(max(measured, 1)) / 1e3).rounded() / 1e3
        print("  CPU \(cpuMilliseconds) ms/frame, broken \(all.statistics.broken)")
        // A smart-cropping region too small for a reduced-scale decode: the dearest case.
        let side = Double(min(layout.width, layout.height)) / 2
        let crop = FrameRectangle(x: Double(layout.width) / 2 - side / 2, y: Double(layout.height) / 2 - side / 2, width: side, height: side)
        var again = try MJPEGFileSource(path: mjpegPath)
        let cropStart = threadCPUNanoseconds()
        var cropped = 0
        while again.nextFrame(timeoutMilliseconds: 0, { frame in
            converter.convert(frame, region: .crop(crop), into: tensor) == nil ? .broken : .used
        }) != .endOfStream { cropped += 1 }
        let cropMilliseconds = (Double(threadCPUNanoseconds() - cropStart) / Double(max(cropped, 1)) / 1e3).rounded() / 1e3
        print("  CPU \(cropMilliseconds) ms/frame with a \(Int(side))x\(Int(side)) crop (decoded at full scale), broken \(again.statistics.broken)")
    } catch {
        print("MJPEG: \(error)")
    }
}
