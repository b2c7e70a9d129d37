import CV4L2
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The camera controls posewatch sets when it opens a camera, so that a dim room or a window
/// behind the person still gives the pose model a steady, usable picture (issue 40).
///
/// Each is set only where the driver offers it (`VIDIOC_QUERYCTRL` answers and the control is not
/// disabled, read-only or inactive); `camera.auto_controls = false` keeps the camera's own settings.
public enum CameraControl: Int, CaseIterable, Sendable {
    /// `V4L2_CID_EXPOSURE_AUTO`: `V4L2_EXPOSURE_APERTURE_PRIORITY` (automatic exposure time with a
    /// fixed iris, UVC's usual automatic mode) when the menu offers it, else `V4L2_EXPOSURE_AUTO`.
    case exposureMode
    /// `V4L2_CID_EXPOSURE_AUTO_PRIORITY` = 0: the camera keeps its frame rate instead of lengthening
    /// the exposure in the dark (with 1 a UVC camera may drop from 15 fps to 5, and the action model
    /// is trained at the negotiated rate). This is the frame-rate-safe limit on auto exposure;
    /// `V4L2_CID_EXPOSURE_ABSOLUTE` is never written, not even when auto exposure is refused.
    case exposurePriority
    /// `V4L2_CID_BACKLIGHT_COMPENSATION`: the middle of its range (1 for an on/off control), for a
    /// person standing in front of a window.
    case backlightCompensation
    /// `V4L2_CID_AUTOGAIN` = 1.
    case autogain

    /// The V4L2 control id.
    public var id: UInt32 {
        switch self {
        case .exposureMode: UInt32(V4L2_CID_EXPOSURE_AUTO)
        case .exposurePriority: UInt32(V4L2_CID_EXPOSURE_AUTO_PRIORITY)
        case .backlightCompensation: UInt32(V4L2_CID_BACKLIGHT_COMPENSATION)
        case .autogain: UInt32(V4L2_CID_AUTOGAIN)
        }
    }

    /// What reports call it.
    public var name: String {
        switch self {
        case .exposureMode: "auto exposure"
        case .exposurePriority: "exposure priority"
        case .backlightCompensation: "backlight compensation"
        case .autogain: "autogain"
        }
    }

    /// The name `v4l2-ctl --list-ctrls` prints for it, used as the JSON key.
    public var key: String {
        switch self {
        case .exposureMode: "exposure_auto"
        case .exposurePriority: "exposure_auto_priority"
        case .backlightCompensation: "backlight_compensation"
        case .autogain: "autogain"
        }
    }
}

/// What happened to one control at open.
public enum CameraControlOutcome: Sendable, Equatable {
    /// Set; the value is the driver's answer to `VIDIOC_S_CTRL` (in a plan: the value to set).
    case set(Int32)
    /// The driver has no such control (`VIDIOC_QUERYCTRL` fails, or the control is disabled).
    case notOffered
    /// The driver shows the control but does not let it be changed.
    case readOnly
    /// Offered but inactive now (another control governs it); left alone.
    case inactive
    /// Exposure only: the menu offers no automatic mode (manual only); exposure is left alone.
    case noAutomaticMode
    /// `VIDIOC_S_CTRL` failed with this errno.
    case refused(Errno)

    /// A stable word for JSON (`set`, `not_offered`, `read_only`, `inactive`, `no_automatic_mode`, `refused`).
    public var state: String {
        switch self {
        case .set: "set"
        case .notOffered: "not_offered"
        case .readOnly: "read_only"
        case .inactive: "inactive"
        case .noAutomaticMode: "no_automatic_mode"
        case .refused: "refused"
        }
    }
}

/// One control's outcome with the range the driver gave for it (0…0 when not offered).
public struct CameraControlState: Sendable, Equatable {
    public var outcome: CameraControlOutcome
    public var minimum: Int32
    public var maximum: Int32

    public init(_ outcome: CameraControlOutcome, minimum: Int32 = 0, maximum: Int32 = 0) {
        self.outcome = outcome
        self.minimum = minimum
        self.maximum = maximum
    }
}

/// What opening the camera did to its controls: made once per open (plain values, no allocation),
/// kept by `CameraDevice` and `CameraSource` for the journal, and made as a plan by `doctor`.
public struct CameraControlReport: Sendable, Equatable, CustomStringConvertible {
    public enum Mode: String, Sendable, Equatable {
        /// The controls were written (`run`, `snapshot`).
        case applied
        /// Only queried: what opening the camera would set (`doctor`).
        case planned
        /// `camera.auto_controls = false`: nothing was queried or written.
        case keptCameraSettings = "kept_camera_settings"
    }

    public var mode: Mode
    public var exposureMode = CameraControlState(.notOffered)
    public var exposurePriority = CameraControlState(.notOffered)
    public var backlightCompensation = CameraControlState(.notOffered)
    public var autogain = CameraControlState(.notOffered)

    public init(mode: Mode) { self.mode = mode }

    /// The report of an open that kept the camera's own settings.
    public static let keptCameraSettings = CameraControlReport(mode: .keptCameraSettings)

    public subscript(control: CameraControl) -> CameraControlState {
        get {
            switch control {
            case .exposureMode: exposureMode
            case .exposurePriority: exposurePriority
            case .backlightCompensation: backlightCompensation
            case .autogain: autogain
            }
        }
        set {
            switch control {
            case .exposureMode: exposureMode = newValue
            case .exposurePriority: exposurePriority = newValue
            case .backlightCompensation: backlightCompensation = newValue
            case .autogain: autogain = newValue
            }
        }
    }

    /// One line: `auto exposure (aperture priority), frame rate kept (exposure_auto_priority 0),
    /// backlight compensation 1 of 0–2, autogain on`, with the controls the camera lacks at the end
    /// (`…; not offered by this camera: auto exposure, exposure priority`). Only posewatch's own
    /// words and numbers: nothing the driver names (control or menu names) is repeated.
    public var description: String {
        if mode == .keptCameraSettings { return "left as the camera has them (camera.auto_controls = false)" }
        var done: [String] = []
        var missing: [String] = []
        for control in CameraControl.allCases {
            let state = self[control]
            switch state.outcome {
            case .set(let value): done.append(Self.phrase(control, value, state))
            case .notOffered: missing.append(control.name)
            case .readOnly: done.append("\(control.name) read-only, left as it is")
            case .inactive: done.append("\(control.name) inactive, left as it is")
            case .noAutomaticMode: done.append("\(control.name): the camera offers manual exposure only, left as it is")
            case .refused(let error): done.append("\(control.name) refused (\(error))")
            }
        }
        if done.isEmpty { return "none offered by this camera (\(missing.joined(separator: ", ")))" }
        let text = done.joined(separator: ", ")
        return missing.isEmpty ? text : "\(text); not offered by this camera: \(missing.joined(separator: ", "))"
    }

    static func phrase(_ control: CameraControl, _ value: Int32, _ state: CameraControlState) -> String {
        switch control {
        case .exposureMode:
            switch UInt32(value) {
            case V4L2_EXPOSURE_APERTURE_PRIORITY.rawValue: return "auto exposure (aperture priority)"
            case V4L2_EXPOSURE_AUTO.rawValue: return "auto exposure (auto)"
            default: return "auto exposure mode \(value)"
            }
        case .exposurePriority:
            return value == 0 ? "frame rate kept (exposure_auto_priority 0)" : "exposure_auto_priority \(value): the frame rate may drop in the dark"
        case .backlightCompensation:
            return "backlight compensation \(value) of \(state.minimum)–\(state.maximum)"
        case .autogain:
            return value == 0 ? "autogain off" : "autogain on"
        }
    }
}

/// Querying and setting the controls of `CameraControl` through a camera's `V4L2SystemCalls`.
public enum CameraControls {
    /// What opening the camera at `path` would set, queried without writing anything (`posewatch
    /// doctor`; a refusal shows only when `run` sets them). Throws when the node does not open.
    public static func plan(path: String) throws(SystemCallError) -> CameraControlReport {
        try plan(path: path, calls: LibV4L2SystemCalls())
    }

    static func plan<Calls: V4L2SystemCalls>(path: String, calls: Calls) throws(SystemCallError) -> CameraControlReport {
        let fd = calls.open(path, flags: O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open", path, .current) }
        defer { _ = calls.close(fd) }
        return apply(fd: fd, calls: calls, writing: false)
    }

    /// For each control: `VIDIOC_QUERYCTRL` (and `VIDIOC_QUERYMENU` for the exposure menu), the
    /// value posewatch wants (`wanted`), then, when `writing`, `VIDIOC_S_CTRL`. Never fails: a
    /// control that is missing or refused is recorded as such.
    static func apply<Calls: V4L2SystemCalls>(fd: Int32, calls: Calls, writing: Bool) -> CameraControlReport {
        var report = CameraControlReport(mode: writing ? .applied : .planned)
        // In order: exposure mode first, since setting it may change which others are active.
        for control in CameraControl.allCases {
            report[control] = settle(control, fd: fd, calls: calls, writing: writing)
        }
        return report
    }

    static func settle<Calls: V4L2SystemCalls>(_ control: CameraControl, fd: Int32, calls: Calls, writing: Bool) -> CameraControlState {
        var query = v4l2_queryctrl()
        query.id = control.id
        // EINVAL (no such control) and ENOTTY (no controls at all) alike: not offered.
        guard (try? calls.control(fd, PW_VIDIOC_QUERYCTRL, &query)) == true,
              query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0 else { return CameraControlState(.notOffered) }
        var state = CameraControlState(.notOffered, minimum: query.minimum, maximum: query.maximum)
        state.outcome = wanted(control, query) { index in offersMenuItem(index, of: query, fd: fd, calls: calls) }
        guard writing, case .set(let value) = state.outcome else { return state }
        var setting = v4l2_control(id: control.id, value: value)
        do throws(Errno) {
            // The driver writes back the value it took (it may snap to its step).
            state.outcome = try calls.control(fd, PW_VIDIOC_S_CTRL, &setting) ? .set(setting.value) : .refused(.wouldBlock)
        } catch {
            state.outcome = .refused(error)
        }
        return state
    }

    /// The value posewatch wants for `control` given what `VIDIOC_QUERYCTRL` said, or why it is
    /// left alone. Pure; `offersMenuItem` answers `VIDIOC_QUERYMENU` for a menu index.
    static func wanted(_ control: CameraControl, _ query: v4l2_queryctrl, offersMenuItem: (Int32) -> Bool) -> CameraControlOutcome {
        if query.flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) != 0 { return .readOnly }
        if query.flags & UInt32(V4L2_CTRL_FLAG_INACTIVE) != 0 { return .inactive }
        switch control {
        case .exposureMode:
            let aperturePriority = Int32(V4L2_EXPOSURE_APERTURE_PRIORITY.rawValue), auto = Int32(V4L2_EXPOSURE_AUTO.rawValue)
            if offersMenuItem(aperturePriority) { return .set(aperturePriority) }
            if offersMenuItem(auto) { return .set(auto) }
            return .noAutomaticMode
        case .exposurePriority:
            return .set(0)
        case .backlightCompensation:
            return .set(middle(of: query))
        case .autogain:
            return .set(1)
        }
    }

    /// The middle of the control's range on its step (1 for an on/off control: 0–1 has no middle).
    static func middle(of query: v4l2_queryctrl) -> Int32 {
        let minimum = Int64(query.minimum), maximum = Int64(query.maximum)
        if query.type == V4L2_CTRL_TYPE_BOOLEAN.rawValue || (minimum == 0 && maximum == 1) { return 1 }
        guard maximum > minimum else { return query.minimum }
        let step = Swift.max(Int64(query.step), 1)
        return Int32(minimum + (maximum - minimum) / 2 / step * step)
    }

    /// `VIDIOC_QUERYMENU`: whether the menu control has item `index` (drivers leave out the modes
    /// a camera lacks; UVC offers manual and aperture priority on most webcams).
    static func offersMenuItem<Calls: V4L2SystemCalls>(_ index: Int32, of query: v4l2_queryctrl, fd: Int32, calls: Calls) -> Bool {
        guard index >= query.minimum, index <= query.maximum else { return false }
        guard query.type == V4L2_CTRL_TYPE_MENU.rawValue else { return true }
        var item = v4l2_querymenu()
        item.id = query.id
        item.index = UInt32(index)
        return (try? calls.control(fd, PW_VIDIOC_QUERYMENU, &item)) == true
    }
}
