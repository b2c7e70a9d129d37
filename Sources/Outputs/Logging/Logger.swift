import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a `Logger`'s entries go. An enum rather than a protocol existential so that the frame loop's
/// logging call is a plain switch.
public enum LogDestination {
    /// journald's native protocol; entries fall back to stderr lines while the socket refuses them.
    case journal(JournalSocket)
    /// `<N>`-prefixed lines on a file descriptor (2 = stderr), for machines without a journal.
    case standardError(fileDescriptor: Int32 = 2)
    /// Entries kept in memory, for tests.
    case memory(LogRecorder)
}

/// Keeps the entries a `Logger` writes, for tests.
public final class LogRecorder {
    /// One logged entry.
    public struct Entry: Sendable, Equatable {
        public var level: LogLevel
        public var message: String
        public var fields: LogFields
    }
    /// Everything logged so far, oldest first.
    public private(set) var entries: [Entry] = []
    public init() {}
    func record(_ entry: Entry) { entries.append(entry) }
}

/// posewatch's logger, in the spirit of swift-log (which Debian's Swift 6.0 cannot build): levels that
/// map onto journald priorities, messages as autoclosures so a disabled level costs one comparison,
/// structured fields, and a backend chosen at start.
///
/// One logger belongs to the frame loop's thread; it reuses one buffer for every entry, so logging
/// allocates nothing beyond what the caller's message itself needs once the buffer has grown to fit.
/// A message with numbers or names in it is composed straight into a second reused buffer
/// (`log(_:_:composing:)`): an interpolated `String` over 15 bytes is a heap allocation.
public final class Logger {
    /// Entries below this level are not evaluated at all.
    public var level: LogLevel
    /// `SYSLOG_IDENTIFIER` (`posewatch`).
    public let identifier: String
    /// Where entries go.
    public let destination: LogDestination
    /// Entries lost because the journal's queue was full (the loop never waits for the logger).
    public private(set) var droppedEntries = 0
    /// Entries written to stderr because the journal refused them.
    public private(set) var entriesWrittenToStandardError = 0
    /// Where entries the journal refuses go instead (2 = stderr; tests pass a pipe).
    public var fallbackFileDescriptor: Int32 = 2
    /// Why a line could not be written to stderr (its reader went away, the disk is full), from
    /// the first failure on; nil while every line arrived. SIGPIPE is ignored, so this is how
    /// posewatch learns that nobody reads its log: `run` stops on it (exit 1) rather than going
    /// on unheard. A full non-blocking stream (EAGAIN) only drops the entry (`droppedEntries`).
    public private(set) var lostOutput: Errno?
    private var buffer = ByteBuffer(capacity: 16 * 1024)
    /// Where `log(_:_:composing:)` composes a message (the entry is then encoded into `buffer`).
    private var messageBuffer = ByteBuffer(capacity: 1024)

    /// A logger writing to `destination`.
    public init(identifier: String = "posewatch", level: LogLevel = .info, destination: LogDestination) {
        self.identifier = identifier
        self.level = level
        self.destination = destination
    }

    /// The journal when its socket exists at `journalPath`, stderr otherwise.
    public static func standard(
        identifier: String = "posewatch", level: LogLevel = .info, journalPath: String = JournalSocket.defaultPath
    ) -> Logger {
        if JournalSocket.isReachable(path: journalPath), let socket = try? JournalSocket(path: journalPath) {
            return Logger(identifier: identifier, level: level, destination: .journal(socket))
        }
        return Logger(identifier: identifier, level: level, destination: .standardError())
    }

    /// Whether entries at `level` are written.
    @inline(__always)
    public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

    /// Logs `message` with `fields` at `level`. Neither autoclosure runs when the level is disabled.
    @inline(__always)
    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        guard level >= self.level else { return }
        write(level, message(), fields(), SourceLocation(file: file, function: function, line: line))
    }

    /// Logs a message that `compose` appends to the buffer it is given (text, `append(integer:)`,
    /// `append(decimal:fractionDigits:)`), with `fields`, at `level`: the frame loop's per-event
    /// entries, which must not allocate. The buffer is the logger's own, reused for every such
    /// message; neither closure runs when the level is disabled.
    @inline(__always)
    public func log(
        _ level: LogLevel, _ fields: @autoclosure () -> LogFields = LogFields(),
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line,
        composing compose: (inout ByteBuffer) -> Void
    ) {
        guard level >= self.level else { return }
        messageBuffer.removeAll()
        compose(&messageBuffer)
        let fields = fields()
        messageBuffer.withBytes { message in
            write(level, message, fields, SourceLocation(file: file, function: function, line: line))
        }
    }

    public func trace(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
                      file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        log(.trace, message(), fields(), file: file, function: function, line: line)
    }
    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
                      file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        log(.debug, message(), fields(), file: file, function: function, line: line)
    }
    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
                     file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        log(.info, message(), fields(), file: file, function: function, line: line)
    }
    public func notice(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
                       file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        log(.notice, message(), fields(), file: file, function: function, line: line)
    }
    public func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
                        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        log(.warning, message(), fields(), file: file, function: function, line: line)
    }
    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
                      file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        log(.error, message(), fields(), file: file, function: function, line: line)
    }
    public func critical(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(),
                         file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line) {
        log(.critical, message(), fields(), file: file, function: function, line: line)
    }

    /// Logs a failure only when it starts an error episode: a camera that fails 600 times in a minute
    /// writes one entry, and `recovered(from:…)` writes one more with the count when it ends.
    public func error(
        in episode: inout ErrorEpisode, at now: MonotonicInstant,
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(event: .error),
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        guard episode.recordFailure(at: now) else { return }
        log(.error, message(), fields(), file: file, function: function, line: line)
    }

    /// Ends an error episode, if one is running, with one entry carrying how many failures it had and
    /// how long it lasted (`EPISODE_FAILURES`, `EPISODE_SECONDS`).
    public func recovered(
        from episode: inout ErrorEpisode, at now: MonotonicInstant,
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = LogFields(event: .error),
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line
    ) {
        guard let end = episode.recordSuccess(at: now) else { return }
        guard isEnabled(.notice) else { return }
        var allFields = fields()
        allFields.episodeFailures = end.failures
        allFields.episodeSeconds = end.seconds
        write(.notice, message(), allFields, SourceLocation(file: file, function: function, line: line))
    }

    private func write(_ level: LogLevel, _ message: String, _ fields: LogFields, _ location: SourceLocation) {
        var message = message
        message.withUTF8 { write(level, UnsafeRawBufferPointer($0), fields, location) }
    }

    /// Writes one entry whose message is the UTF-8 bytes `message`.
    private func write(_ level: LogLevel, _ message: UnsafeRawBufferPointer, _ fields: LogFields, _ location: SourceLocation) {
        switch destination {
        case .journal(let socket):
            buffer.encodeJournalEntry(level: level, message: message, fields: fields, identifier: identifier, location: location)
            do {
                try buffer.withBytes { bytes throws(Errno) in try socket.send(bytes) }
            } catch where error == .wouldBlock {
                droppedEntries += 1
            } catch {
                // No journal listening (or it refused): the entry is still worth a stderr line.
                entriesWrittenToStandardError += 1
                writeLine(level, message, fields, to: fallbackFileDescriptor)
            }
        case .standardError(let fileDescriptor):
            writeLine(level, message, fields, to: fileDescriptor)
        case .memory(let recorder):
            recorder.record(LogRecorder.Entry(level: level, message: String(decoding: message, as: UTF8.self), fields: fields))
        }
    }

    private func writeLine(_ level: LogLevel, _ message: UnsafeRawBufferPointer, _ fields: LogFields, to fileDescriptor: Int32) {
        buffer.encodeStandardErrorLine(level: level, message: message, fields: fields)
        let failure: Errno? = buffer.withBytes { bytes in
            var remaining = bytes
            while !remaining.isEmpty {
                let written = Glibc.write(fileDescriptor, remaining.baseAddress, remaining.count)
                if written < 0 && errno == EINTR { continue }
                if written < 0 && errno == EAGAIN { return .wouldBlock }
                guard written > 0 else { return written < 0 ? Errno.current : Errno(rawValue: EIO) }
                remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
            }
            return nil
        }
        guard let failure else { return }
        if failure == .wouldBlock { droppedEntries += 1 } else { lostOutput = lostOutput ?? failure }
    }
}
