import Glibc
import Testing

/// Starts a program the way systemd or an owner's shell does: no signal blocked and every signal
/// at its default disposition. The test runner blocks signals on its threads and may ignore
/// SIGPIPE, and a child inherits both, which would hide a posewatch that SIGTERM or SIGPIPE kills.
/// Standard input reads /dev/null; standard output and error go to the files named (created or
/// truncated). Returns the child's pid.
func launchWithDefaultSignals(_ arguments: [String], environment: [String]? = nil,
                              standardOutput: String, standardError: String) throws -> pid_t {
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var envp: [UnsafeMutablePointer<CChar>?] = (environment ?? []).map { strdup($0) } + [nil]
    defer { envp.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t(), all = sigset_t()
    sigemptyset(&none)
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let started = environment == nil
        ? posix_spawn(&pid, arguments[0], &actions, &attributes, &argv, environ)
        : posix_spawn(&pid, arguments[0], &actions, &attributes, &argv, &envp)
    try #require(started == 0, "posix_spawn \(arguments[0]): \(String(cString: strerror(started)))")
    return pid
}

/// A grey 4:2:0 Y4M clip, 64×48 at 15 fps (an empty room: nobody in it), of `seconds` at `path`.
func makeEmptyRoomClip(seconds: Int, at path: String) -> String {
    var bytes = Array("YUV4MPEG2 W64 H48 F15:1 Ip A1:1 C420jpeg\n".utf8)
    for _ in 0..<(seconds * 15) { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: 128, count: 64 * 48 * 3 / 2) }
    let file = fopen(path, "wb")!
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, file) }
    fclose(file)
    return path
}
