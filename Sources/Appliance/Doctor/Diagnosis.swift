import JSONFormat
import Capture
import Outputs
import LinuxSystem

/// Everything the doctor looked at, gathered by `DoctorProbe` (real devices) or built by tests.
public struct DoctorObservations: Sendable {
    /// One `/dev/video*` node and what describing it gave.
    public struct CameraNode: Sendable {
        public var path: String
        public var description: Result<CameraDescription, SystemCallError>
        /// For a usable camera: the controls opening it would set (queried, not written), or that
        /// `camera.auto_controls = false` keeps the camera's own.
        public var controls: CameraControlReport?
        public init(path: String, description: Result<CameraDescription, SystemCallError>, controls: CameraControlReport? = nil) {
            self.path = path
            self.description = description
            self.controls = controls
        }
    }
    /// A model file: missing (with why) or found (size and digest), and whether it loaded and ran
    /// once on a test input as `run` would use it.
    public struct ModelFile: Sendable {
        public var role: String
        public var path: String
        public var contents: Result<(size: Int, sha256: String), SystemCallError>
        public var expectedSHA256: String?
        /// Why the model does not load or fails on its test input; nil when it ran.
        public var loadError: String?
        public init(role: String, path: String, contents: Result<(size: Int, sha256: String), SystemCallError>,
                    expectedSHA256: String?, loadError: String? = nil) {
            self.role = role
            self.path = path
            self.contents = contents
            self.expectedSHA256 = expectedSHA256
            self.loadError = loadError
        }
    }

    public var cameraNodes: [CameraNode] = []
    /// Whether libcamera's V4L2 compatibility layer is preloaded (`libcamerify`).
    public var underLibcamerify = false
    public var gpioBackend = ""
    public var gpioChips: [Result<GPIOChipDescription, SystemCallError>] = []
    /// The configured LED lines that some chip has, by name.
    public var ledLines: [String: GPIOLineLocation] = [:]
    public var journalSocketPath = "/run/systemd/journal/socket"
    /// nil when the journal socket accepted a connection, else why not.
    public var journalError: Errno? = nil
    public var models: [ModelFile] = []
    /// The config file the rest was checked against.
    public var configurationFile: ConfigurationFileState = .defaults(path: ApplianceConfiguration.defaultPath)

    public init() {}
}

/// What the doctor made of the config file.
public enum ConfigurationFileState: Sendable {
    /// No file at the default path: all defaults.
    case defaults(path: String)
    /// Read and valid.
    case loaded(path: String)
    /// Refused, with the line and key (`run` would exit 78 on it).
    case rejected(ConfigurationError)
}

/// Turns observations into verdicts. Pure, so every rule is unit-tested with fake observations.
public enum Diagnosis {
    /// `captureRequest` is what the pipeline asks of a camera (model input size, the action
    /// model's frame rate, overrides); each usable camera's item shows the mode it would get.
    public static func report(_ observations: DoctorObservations, configuration: ApplianceConfiguration,
                              captureRequest: CaptureRequest = CaptureRequest()) -> DoctorReport {
        DoctorReport(items: configurationItems(observations)
            + cameraItems(observations, configuration, captureRequest)
            + gpioItems(observations, configuration)
            + journalItems(observations)
            + modelItems(observations))
    }

    // MARK: config

    static func configurationItems(_ observations: DoctorObservations) -> [DoctorItem] {
        switch observations.configurationFile {
        case .defaults(let path):
            return [DoctorItem(area: .config, subject: path, verdict: .ok, summary: "not present: every setting has its default")]
        case .loaded(let path):
            return [DoctorItem(area: .config, subject: path, verdict: .ok, summary: "read; the checks below use its settings")]
        case .rejected(let error):
            return [DoctorItem(area: .config, subject: error.path, verdict: .fail,
                               summary: "\(error); posewatch will not start until it is fixed (the checks below use the defaults)",
                               facts: [("error", .string(error.description))])]
        }
    }

    // MARK: cameras

    static func cameraItems(_ observations: DoctorObservations, _ configuration: ApplianceConfiguration,
                            _ captureRequest: CaptureRequest = CaptureRequest()) -> [DoctorItem] {
        var items: [DoctorItem] = []
        var usable: [String] = []
        for node in observations.cameraNodes {
            switch node.description {
            case .failure(let error):
                let advice = error.errno == .permissionDenied
                    ? " (add the user to the 'video' group, or install posewatch's udev rules)" : ""
                items.append(DoctorItem(area: .camera, subject: node.path, verdict: .note,
                    summary: "cannot open: \(error.errno)\(advice)",
                    facts: [("error", .string(error.description))]))
            case .success(let camera):
                let item = cameraItem(camera, underLibcamerify: observations.underLibcamerify, captureRequest: captureRequest,
                                      controls: node.controls)
                if item.verdict == .ok { usable.append(camera.path) }
                items.append(item)
            }
        }
        // The overall verdict: the configured camera, or any usable one when none is configured.
        if let wanted = configuration.cameraDevice {
            let matching = observations.cameraNodes.first { node in
                node.path == wanted || ((try? node.description.get())?.stableNames.contains(wanted) ?? false)
            }
            if matching == nil {
                items.append(DoctorItem(area: .camera, subject: wanted, verdict: .fail,
                    summary: "the configured camera does not exist: plug it in, or fix 'camera.device' in the config"))
            } else if let matching, !usable.contains(matching.path) {
                items.append(DoctorItem(area: .camera, subject: wanted, verdict: .fail,
                    summary: "the configured camera is not usable (see above)"))
            } else {
                items.append(DoctorItem(area: .camera, subject: wanted, verdict: .ok, summary: "configured camera is usable"))
            }
        } else if usable.isEmpty {
            let sawCSI = observations.cameraNodes.contains { (try? $0.description.get())?.isRawCSISensor ?? false }
            let advice = sawCSI
                ? "the Raspberry Pi CSI camera needs libcamera: run posewatch under 'libcamerify' (deploy/posewatch-libcamerify.conf), or plug in a USB (UVC) webcam"
                : "plug in a USB (UVC) webcam, or run under 'libcamerify' for a Raspberry Pi CSI camera module"
            let found = observations.cameraNodes.isEmpty ? "no /dev/video* devices" : "no usable camera"
            items.append(DoctorItem(area: .camera, subject: "camera", verdict: .fail, summary: "\(found): \(advice)"))
        } else {
            items.append(DoctorItem(area: .camera, subject: "camera", verdict: .ok,
                summary: "will use \(MessageExcerpt.path(usable[0])) (first usable camera; set 'camera.device' to choose)"))
        }
        // The doctor runs no pose model on camera frames, so it cannot see people lying on their
        // side: it says how the picture is turned and where to look (snapshot gives the hint).
        if var verdict = items.last, verdict.verdict == .ok {
            verdict.details.append(orientationDetail(configuration))
            verdict.facts += [("rotation", .integer(configuration.cameraRotation)), ("flip", .bool(configuration.cameraFlip))]
            items[items.count - 1] = verdict
        }
        return items
    }

    /// How `run` turns the camera's picture, and how to check it.
    static func orientationDetail(_ configuration: ApplianceConfiguration) -> String {
        if configuration.cameraRotation == 0 && !configuration.cameraFlip {
            return "the pose model sees the picture as the camera gives it (camera.rotation = 0); if people look sideways in 'posewatch snapshot', it names the camera.rotation that stands them up"
        }
        let mirror = configuration.cameraFlip ? ", then mirrored left to right" : ""
        return "the picture is turned \(configuration.cameraRotation)° clockwise\(mirror) before the pose model (camera.rotation, camera.flip); 'posewatch snapshot' shows it as the model sees it"
    }

    static func cameraItem(_ camera: CameraDescription, underLibcamerify: Bool,
                           captureRequest: CaptureRequest = CaptureRequest(), controls: CameraControlReport? = nil) -> DoctorItem {
        // The card, driver and bus names come from the driver (a USB camera names itself): escaped.
        let identity = "\(MessageExcerpt.plain(camera.card)) [\(MessageExcerpt.plain(camera.driver))] \(MessageExcerpt.plain(camera.busInfo))"
        var details = camera.stableNames.map { "also known as \(MessageExcerpt.path($0))" }
        details.append("capabilities: \(camera.capabilities.names.joined(separator: ", "))")
        for format in camera.formats {
            let flags = [format.isCompressed ? "compressed" : nil, format.isEmulated ? "emulated by libv4lconvert" : nil].compactMap { $0 }
            let sizes = format.frameSizes.map { size in
                let rates = size.intervals.map(\.description)
                return "\(size.width)x\(size.height)" + (rates.isEmpty ? "" : "@\(rates.joined(separator: "/"))")
            }
            details.append("\(format.fourCC) \(MessageExcerpt.plain(format.name))\(flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))"): \(sizes.joined(separator: " "))")
        }
        var facts: [(String, JSONValue)] = [
            ("driver", .string(camera.driver)), ("card", .string(camera.card)), ("bus", .string(camera.busInfo)),
            ("stable_names", .array(camera.stableNames.map(JSONValue.string))),
            ("capabilities", .array(camera.capabilities.names.map(JSONValue.string))),
            ("formats", .array(camera.formats.map { format in
                .object([
                    ("fourcc", .string(format.fourCC.description)), ("name", .string(format.name)),
                    ("compressed", .bool(format.isCompressed)), ("emulated", .bool(format.isEmulated)),
                    ("sizes", .array(format.frameSizes.map { size in
                        .object([("width", .integer(size.width)), ("height", .integer(size.height)),
                                 ("fps", .array(size.intervals.map { .number($0.framesPerSecond) }))])
                    })),
                ])
            })),
        ]
        if !camera.isVideoCaptureDevice {
            let kind = !camera.capabilities.intersection(.memoryToMemory).isEmpty ? "a codec/ISP (memory-to-memory) node"
                : camera.capabilities.contains(.metadataCapture) ? "a metadata node" : "not a capture device"
            return DoctorItem(area: .camera, subject: camera.path, verdict: .note,
                              summary: "\(identity): \(kind), not a camera", facts: facts)
        }
        if camera.isRawCSISensor {
            let advice = underLibcamerify
                ? "raw sensor even under libcamerify: check that libcamera sees it ('cam -l')"
                : "Raspberry Pi CSI camera exposed as raw Bayer; posewatch needs libcamera in front of it: run under 'libcamerify' (deploy/posewatch-libcamerify.conf) or use a USB (UVC) webcam"
            return DoctorItem(area: .camera, subject: camera.path, verdict: .note,
                              summary: "\(identity): \(advice)", details: details, facts: facts)
        }
        if !camera.isUsableCamera {
            let reason = !camera.capabilities.contains(.streaming) ? "no streaming I/O"
                : camera.capabilities.contains(.videoCapture) ? "no pixel format posewatch can convert"
                : "multi-planar only (not supported yet)"
            return DoctorItem(area: .camera, subject: camera.path, verdict: .note,
                              summary: "\(identity): not usable: \(reason)", details: details, facts: facts)
        }
        // The mode capture would negotiate, by the same pure rules CameraDevice uses.
        guard let mode = CaptureModeSelection.select(from: camera.formats, request: captureRequest) else {
            return DoctorItem(area: .camera, subject: camera.path, verdict: .note,
                              summary: "\(identity): not usable: no format posewatch can convert", details: details, facts: facts)
        }
        details.append("would capture \(mode)")
        facts.append(("capture_mode", captureModeFacts(mode)))
        if let controls {
            // The report holds only posewatch's words and numbers, nothing the driver names.
            details.append(controls.mode == .planned ? "camera controls (set at open): \(controls)" : "camera controls: \(controls)")
            facts.append(("controls", controlFacts(controls)))
        }
        return DoctorItem(area: .camera, subject: camera.path, verdict: .ok,
                          summary: "\(identity): usable camera", details: details, facts: facts)
    }

    static func captureModeFacts(_ mode: CaptureMode) -> JSONValue {
        .object([
            ("fourcc", .string(mode.fourCC.description)), ("width", .integer(mode.width)), ("height", .integer(mode.height)),
            ("camera_fps", .number(mode.cameraFramesPerSecond)), ("model_fps", .number(mode.targetFramesPerSecond)),
            ("decimation", .number(mode.decimation)), ("meets_model_rate", .bool(mode.meetsTargetRate)),
            ("emulated", .bool(mode.isEmulated)),
        ])
    }

    /// `{"mode": "planned", "text": "…", "exposure_auto": {"state": "set", "value": 3, "minimum": 0, "maximum": 3}, …}`.
    static func controlFacts(_ controls: CameraControlReport) -> JSONValue {
        var fields: [(String, JSONValue)] = [("mode", .string(controls.mode.rawValue)), ("text", .string(controls.description))]
        guard controls.mode != .keptCameraSettings else { return .object(fields) }
        for control in CameraControl.allCases {
            let state = controls[control]
            var entry: [(String, JSONValue)] = [("state", .string(state.outcome.state))]
            switch state.outcome {
            case .set(let value): entry.append(("value", .integer(Int(value))))
            case .refused(let error): entry.append(("error", .string(error.description)))
            case .notOffered, .readOnly, .inactive, .noAutomaticMode: break
            }
            if state.outcome != .notOffered {
                entry += [("minimum", .integer(Int(state.minimum))), ("maximum", .integer(Int(state.maximum)))]
            }
            fields.append((control.key, .object(entry)))
        }
        return .object(fields)
    }

    // MARK: GPIO

    static func gpioItems(_ observations: DoctorObservations, _ configuration: ApplianceConfiguration) -> [DoctorItem] {
        var items: [DoctorItem] = []
        let ledsNeeded = configuration.ledBackend == .gpio
        for chip in observations.gpioChips {
            switch chip {
            case .success(let chip):
                var details: [String] = []
                if chip.label == "pinctrl-rp1" && chip.name != "gpiochip0" {
                    details.append("Raspberry Pi 5 header chip is \(MessageExcerpt.plain(chip.name)) on this kernel (not gpiochip0); posewatch finds LEDs by line name or header number, so nothing to change")
                }
                items.append(DoctorItem(area: .gpio, subject: chip.path, verdict: .ok,
                    summary: "\(MessageExcerpt.plain(chip.name)) '\(MessageExcerpt.plain(chip.label))', \(chip.lineCount) lines", details: details,
                    facts: [("name", .string(chip.name)), ("label", .string(chip.label)), ("lines", .integer(chip.lineCount))]))
            case .failure(let error):
                let advice = error.errno == .permissionDenied ? " (add the user to the 'gpio' group, or install posewatch's udev rules)" : ""
                items.append(DoctorItem(area: .gpio, subject: error.subject, verdict: ledsNeeded ? .fail : .note,
                    summary: "cannot open: \(error.errno)\(advice)", facts: [("error", .string(error.description))]))
            }
        }
        guard ledsNeeded else {
            items.append(DoctorItem(area: .gpio, subject: "LEDs", verdict: .ok,
                summary: "console LED backend configured; no GPIO needed"))
            return items
        }
        if observations.gpioChips.isEmpty {
            items.append(DoctorItem(area: .gpio, subject: "LEDs", verdict: .fail,
                summary: "no GPIO chips (/dev/gpiochip*) on this machine (\(observations.gpioBackend)): set 'leds.backend = \"console\"' or run on a board with GPIO"))
            return items
        }
        let roles = configuration.actionLEDLines.map { ($0.line, "\($0.action) LED") } + [(configuration.statusLEDLine, "status LED")]
        for (line, role) in roles {
            guard let location = observations.ledLines[line] else {
                items.append(DoctorItem(area: .gpio, subject: line, verdict: .fail,
                    summary: "\(role): no GPIO chip has a line named \(MessageExcerpt.plain(line)), nor is it a header pin (GPIO0…GPIO27) of a Raspberry Pi's GPIO controller; list names with 'gpioinfo' and fix 'leds' in the config",
                    facts: [("role", .string(role))]))
                continue
            }
            let found = location.foundBy == .headerNumber ? " (by header number: the board names no line \(MessageExcerpt.plain(line)))" : ""
            let place = "\(MessageExcerpt.plain(location.chip.name)) ('\(MessageExcerpt.plain(location.chip.label))') line \(location.offset)\(found)"
            let facts: [(String, JSONValue)] = [("role", .string(role)), ("chip", .string(location.chip.path)),
                                                ("offset", .integer(location.offset)), ("used", .bool(location.isUsed)),
                                                ("consumer", .string(location.consumer)), ("found_by", .string(location.foundBy.rawValue))]
            if location.isUsed && location.consumer != "posewatch" {
                let holder = location.consumer.isEmpty ? "another program" : "'\(MessageExcerpt.plain(location.consumer))'"
                items.append(DoctorItem(area: .gpio, subject: line, verdict: .fail,
                    summary: "\(role): \(place) is held by \(holder); free it or choose another line", facts: facts))
            } else {
                let state = location.isUsed ? "held by posewatch (the service is running)" : "free"
                items.append(DoctorItem(area: .gpio, subject: line, verdict: .ok, summary: "\(role): \(place), \(state)", facts: facts))
            }
        }
        return items
    }

    // MARK: journal

    static func journalItems(_ observations: DoctorObservations) -> [DoctorItem] {
        if let error = observations.journalError {
            return [DoctorItem(area: .journal, subject: observations.journalSocketPath, verdict: .note,
                summary: "journald is not reachable (\(error)); posewatch will log to stderr with <N> priority prefixes instead")]
        }
        return [DoctorItem(area: .journal, subject: observations.journalSocketPath, verdict: .ok,
                           summary: "journald accepts entries; read them with 'journalctl -u posewatch'")]
    }

    // MARK: models

    static func modelItems(_ observations: DoctorObservations) -> [DoctorItem] {
        observations.models.map { model in
            switch model.contents {
            case .failure(let error):
                return DoctorItem(area: .model, subject: model.role, verdict: .fail,
                    summary: "\(MessageExcerpt.path(model.path)): \(error.errno); reinstall the posewatch package (it downloads and checks the model) or set the path in the config",
                    facts: [("path", .string(model.path)), ("error", .string(error.description))])
            case .success(let contents):
                let facts: [(String, JSONValue)] = [("path", .string(model.path)), ("bytes", .integer(contents.size)), ("sha256", .string(contents.sha256))]
                let details = ["sha256 \(contents.sha256)"]
                if let expected = model.expectedSHA256, expected != contents.sha256 {
                    let advice = model.path == "built in"
                        ? "this binary embeds another \(model.role) than the one its source fingerprints (a stale build): rebuild posewatch"
                        : "\(MessageExcerpt.path(model.path)): \(contents.size) bytes but the digest is not the published one; the file is damaged or a different model, reinstall it"
                    return DoctorItem(area: .model, subject: model.role, verdict: .fail, summary: advice, details: details, facts: facts)
                }
                if let loadError = model.loadError {
                    return DoctorItem(area: .model, subject: model.role, verdict: .fail,
                                      summary: "\(loadError); posewatch cannot use it: reinstall the posewatch package or set another path in the config",
                                      details: details, facts: facts + [("error", .string(loadError))])
                }
                return DoctorItem(area: .model, subject: model.role, verdict: .ok,
                                  summary: "\(MessageExcerpt.path(model.path)), \(contents.size) bytes, loads and runs", details: details, facts: facts)
            }
        }
    }
}
