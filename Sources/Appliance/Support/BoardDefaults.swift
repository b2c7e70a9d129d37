#if canImport(Glibc)
import Glibc
#endif

/// Per-board defaults the config file can override, from the board's device-tree model string
/// (`/proc/device-tree/model`, e.g. "Raspberry Pi 4 Model B Rev 1.4").
///
/// `inferenceThreads` is the MoveNet thread count when `pose.threads` is not set. The figures behind
/// it are in docs/performance-arm64.md (instructions per frame counted under QEMU for each core,
/// an IPC range for it, and the 15 fps budget): a board that meets the budget with headroom on fewer
/// threads keeps the other cores for capture, the journal and the rest of the system.
public enum BoardDefaults: Equatable, Sendable {
    /// Raspberry Pi 5 (Cortex-A76, SDOT).
    case pi5
    /// Raspberry Pi 4 / 400 / Compute Module 4 (Cortex-A72, NEON without dot product).
    case pi4
    /// Raspberry Pi 3 (Cortex-A53).
    case pi3
    /// Raspberry Pi Zero 2 W (Cortex-A53, 512 MB).
    case zero2W
    /// Anything else (a PC, another board): one thread per online CPU, as before.
    case other

    /// The board from a device-tree model string.
    public init(model: String) {
        if model.hasPrefix("Raspberry Pi 5") || model.hasPrefix("Raspberry Pi Compute Module 5") || model.hasPrefix("Raspberry Pi 500") {
            self = .pi5
        } else if model.hasPrefix("Raspberry Pi 4") || model.hasPrefix("Raspberry Pi Compute Module 4") || model.hasPrefix("Raspberry Pi 400") {
            self = .pi4
        } else if model.hasPrefix("Raspberry Pi Zero 2") {
            self = .zero2W
        } else if model.hasPrefix("Raspberry Pi 3") || model.hasPrefix("Raspberry Pi Compute Module 3") {
            self = .pi3
        } else {
            self = .other
        }
    }

    /// This machine's board (read once).
    public static let current = BoardDefaults(model: readModel())

    /// MoveNet threads when the config does not set `pose.threads`; nil is one per online CPU.
    public var inferenceThreads: Int? {
        switch self {
        // Pi 5: 53M instructions per frame; 15 fps needs IPC 0.33 on one core (68–114 fps estimated).
        case .pi5: 1
        // Pi 4: 89M per frame; one core needs IPC 0.89 at 1.5 GHz, the bottom of the assumed
        // 0.9–1.5, so no headroom; two need 0.49–0.57 (24–46 fps estimated) and leave two cores free.
        case .pi4: 2
        // Pi 3 / Zero 2 W: 89M per frame on a slower in-order core; 15 fps only on all four (Pi 3 B
        // at 1.2 GHz 15–33 fps, Zero 2 W 12.5–27 estimated); the loop drops late frames below it.
        case .pi3, .zero2W: 4
        case .other: nil
        }
    }

    /// The device-tree model, without its trailing NUL; "" when there is none (not a DT board).
    static func readModel(path: String = "/proc/device-tree/model") -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: bytes[0..<count].prefix { $0 != 0 }, as: UTF8.self)
    }
}
