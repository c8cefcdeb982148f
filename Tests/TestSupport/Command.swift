import Foundation
import Glibc

/// Runs a short command to completion with posix_spawn + waitpid.
/// (Foundation's `Process.waitUntilExit` can hang when called from a task
/// on the cooperative pool, so one-shot commands avoid it.)
public enum Command {
    /// Runs `arguments[0]` (a path) with the rest as arguments; stdout and
    /// stderr go to /dev/null unless `outputPath` is given (stderr goes to
    /// `errorPath` when that is given too). `environment`, when given, is
    /// added to this process's, or is the whole environment when
    /// `inheritsEnvironment` is false (as `env -i`, without putting the
    /// values on a command line other users can read). Returns the exit status.
    @discardableResult
    public static func run(
        _ arguments: [String], outputPath: String? = nil, errorPath: String? = nil,
        environment: [String: String]? = nil, inheritsEnvironment: Bool = true
    ) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let output = outputPath ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var envp: [UnsafeMutablePointer<CChar>?] = []
        if let environment {
            var merged = inheritsEnvironment ? ProcessInfo.processInfo.environment : [:]
            merged.merge(environment) { _, new in new }
            envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { for pointer in envp { free(pointer) } }
        let status =
            environment == nil
            ? posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
            : posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard status == 0 else {
            throw ServiceProcessError(description: "cannot start \(arguments[0]): errno \(status)")
        }
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0 {
            guard errno == EINTR else { throw ServiceProcessError(description: "waitpid failed: errno \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS, spelled out (they are macros).
        return (exitStatus & 0x7F) == 0 ? (exitStatus >> 8) & 0xFF : 128 + (exitStatus & 0x7F)
    }

    /// `scripts/pg.sh <command>` for outage tests.
    public static func pg(_ command: String) throws -> Int32 {
        try run(["/bin/bash", ServiceProcess.repositoryRoot.appendingPathComponent("scripts/pg.sh").path, command])
    }
}

/// Runs blocking work (waitpid, polling a child's pipe, usleep) on a
/// dedicated thread and awaits it, so async tests never park one of the
/// cooperative pool's few threads.
public func offPool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        let thread = Thread {
            do {
                continuation.resume(returning: try body())
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.start()
    }
}

extension Command {
    /// `scripts/pg.sh <command>` on a dedicated thread (e.g. stopping
    /// PostgreSQL in an outage test).
    public static func pgOffPool(_ command: String) async throws -> Int32 {
        try await offPool { try pg(command) }
    }
}
