// Outputs: what posewatch shows and tells. Everything here is driven by the one frame loop; nothing
// starts threads or reads the clock on its own, so tests drive it with made-up instants.
//
// - LEDs: `LEDController` (pure state machine: decisions, repetitions and health in; line levels and
//   the next change out) → `LEDDriver` (writes only lines that changed) → `GPIOLEDLines` (libgpiod
//   through CGPIOD, lines by name, consumer "posewatch", off and released at the end) or
//   `ConsoleLEDLines` (`--leds console`). `LEDLayout` maps classifier labels to LEDs.
// - Journal: `Logger` (levels, autoclosure messages, `LogFields`) writing journald's native protocol
//   through `JournalSocket` (memfd for large entries), or `<N>`-prefixed stderr lines without a
//   journal; `ErrorEpisode` for once-per-episode errors; `RunSummary` for the periodic summary.
// - systemd: `ServiceNotifier` (sd_notify without libsystemd) and `WatchdogSchedule`.
//
// How the frame loop is meant to use them (one poll() with the camera fd, a signalfd and a timerfd):
//
//     let layout = try LEDLayout(actions: configuration.actionLEDLines, statusLine: configuration.statusLEDLine)
//     let logger = Logger.standard(level: configuration.logLevel)
//     let notifier = ServiceNotifier.fromEnvironment()
//     let watchdog = configuration.watchdogEnabled ? WatchdogSchedule.fromEnvironment() : nil
//     var leds = LEDController(actionCount: layout.actionCount, now: .now())
//     var driver = LEDDriver(lines: try GPIOLEDLines(leds: layout.leds), actionCount: layout.actionCount)
//     var summary = RunSummary(actionLabels: layout.actionLabels, now: .now())
//     var cameraErrors = ErrorEpisode()
//     logger.notice("posewatch started", LogFields(event: .start))
//
//     // after each classifier decision / counted repetition / camera event, at `now`:
//     leds.show(layout.indication(forAction: label), at: now)          // or .lowConfidence, .noPerson …
//     leds.repetitionCounted(action: index, at: now)
//     logger.info("rep", LogFields(event: .rep, action: label, reps: count))
//     logger.error(in: &cameraErrors, at: now, "camera lost: \(error)", LogFields(event: .camera))
//     leds.setStatus(.cameraLost, at: now)
//     // on every wake-up:
//     try driver.apply(leds.levels(at: now))
//     timerfd deadline = min(leds.nextChange(after: now), next watchdog ping, next summary)
//     try? notifier.watchdog()                                        // every watchdog.pingIntervalNanoseconds
//     // at stop: leds.setStatus(.stopped, at: now); try driver.apply(leds.levels(at: now));
//     //          logger.notice("summary", summary.fields(at: now)); try? notifier.stopping()
//
// A loop generic over `Lines: LEDLines & ~Copyable` takes either backend without an existential.
