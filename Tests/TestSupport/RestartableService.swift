import Foundation

/// A service executable of this package that a test can kill (SIGKILL) and
/// start again on the same port, so its clients find it again; it keeps
/// the logs of every process it started. Blocking process work runs off the
/// cooperative pool.
public final class RestartableService: @unchecked Sendable {
    public let executable: String
    public private(set) var process: ServiceProcess?
    /// The port of the first start, reused by every restart (0 before).
    public private(set) var port = 0
    private var earlierLogs = ""

    public init(executable: String) {
        self.executable = executable
    }

    /// Starts the executable with `environment`, on the port it had before.
    public func start(environment: [String: String]) async throws {
        let arguments = port == 0 ? [] : ["--listen", "127.0.0.1:\(port)"]
        let name = executable
        let started = try await offPool {
            try ServiceProcess(executable: name, arguments: arguments, environment: environment)
        }
        process = started
        port = started.port
    }

    /// SIGKILLs the running process, if any.
    public func kill() async throws {
        let running = process
        if let running { earlierLogs += running.logs }
        process = nil
        _ = try await offPool { running?.kill9() }
    }

    /// Stops the running process gracefully, if any.
    public func stop() async {
        let running = process
        _ = try? await offPool { running?.stop() }
    }

    /// Waits (bounded) until the running process has exited (e.g. after it
    /// killed itself at a fault point); true when it did.
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Bool {
        guard let running = process else { return true }
        return try await offPool {
            let deadline = ContinuousClock.now + timeout
            while running.process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
            return !running.process.isRunning
        }
    }

    /// Every log line written so far, earlier processes included.
    public var logs: String { earlierLogs + (process?.logs ?? "") }
}
