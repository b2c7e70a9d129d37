import Capture

/// A frame source the loop can wait on: cameras give a descriptor for the loop's `poll()`; files
/// have none and pace themselves inside `nextFrame`.
protocol LoopFrameSource: FrameSource, ~Copyable {
    /// The descriptor to poll for a new frame, or nil (a file, or a camera that is gone).
    var pollDescriptor: Int32? { get }
    /// Whether this source can disappear and come back (a camera), so it gets a health LED.
    static var isCamera: Bool { get }
}

extension CameraSource: LoopFrameSource {
    var pollDescriptor: Int32? { fileDescriptor }
    static var isCamera: Bool { true }
}

extension Y4MFileSource: LoopFrameSource {
    var pollDescriptor: Int32? { nil }
    static var isCamera: Bool { false }
}

extension MJPEGFileSource: LoopFrameSource {
    var pollDescriptor: Int32? { nil }
    static var isCamera: Bool { false }
}
