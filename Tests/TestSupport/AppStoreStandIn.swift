import Foundation
import Glibc

/// The Python stand-in for Apple's server (Tests/interop/app_store_standin.py)
/// as a child process: started with a config file, answering control
/// commands (one JSON line in, one out), stopped by PID. Blocking pipe reads
/// run on dedicated threads, never on the cooperative pool. Used by the
/// client's tests (AppStoreServerAPITests) and by PaymentsService's.
public final class AppStoreStandIn: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible { public let description: String }

    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lines = LineQueue()
    public private(set) var productionPort = 0
    public private(set) var sandboxPort = 0
    public private(set) var caPath = ""
    public private(set) var otherCAPath = ""
    public let stderrPath: String

    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// Starts the stand-in with `config` (written to `directory`) and waits,
    /// bounded, for its "standin listening {...}" line.
    public init(config: [String: Any], directory: URL) async throws {
        let python = Self.repositoryRoot + "/.venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            // A failure, not a skip: these tests must not pass silently.
            throw Failure(description: "Python venv missing at \(python): run scripts/install-deps.sh first")
        }
        let configPath = directory.appendingPathComponent("standin.json")
        try JSONSerialization.data(withJSONObject: config).write(to: configPath)
        stderrPath = directory.appendingPathComponent("standin.stderr").path
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else {
            throw Failure(description: "cannot create the stand-in's stderr file at \(stderrPath)")
        }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.repositoryRoot + "/Tests/interop/app_store_standin.py", "--config", configPath.path]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
        let handle = output.fileHandleForReading
        let lines = self.lines
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    lines.push(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            lines.close()
        }
        let first = try await nextLine(timeout: 30)
        guard first.hasPrefix("standin listening "),
            let data = first.dropFirst("standin listening ".count).data(using: .utf8),
            let announced = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let production = announced["production"] as? Int, let sandbox = announced["sandbox"] as? Int,
            let ca = announced["caPath"] as? String, let other = announced["otherCAPath"] as? String
        else {
            stop()
            throw Failure(description: "stand-in did not start: \(first) \(stderr)")
        }
        productionPort = production
        sandboxPort = sandbox
        caPath = ca
        otherCAPath = other
    }

    private func nextLine(timeout: Double) async throws -> String {
        let lines = self.lines
        guard let line = try await offPool({ lines.pop(timeoutSeconds: timeout) }) else {
            throw Failure(description: "no answer from the stand-in within \(timeout)s: \(stderr)")
        }
        return line
    }

    /// Sends one control command and returns its answer (one at a time:
    /// answers are matched to commands by order).
    @discardableResult
    public func command(_ command: [String: Any]) async throws -> [String: Any] {
        var data = try JSONSerialization.data(withJSONObject: command)
        data.append(0x0A)
        try input.fileHandleForWriting.write(contentsOf: data)
        let line = try await nextLine(timeout: 10)
        guard let answer = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            answer["ok"] as? Bool == true
        else {
            throw Failure(description: "control command \(command) failed: \(line)")
        }
        return answer
    }

    /// Arms a fault for the next `count` requests whose path starts with `match`.
    public func fault(_ fault: [String: Any], match: String = "/", environment: String = "*", count: Int = 1)
        async throws
    {
        try await command(["op": "fault", "env": environment, "match": match, "count": count, "fault": fault])
    }

    /// Adds data to `environment` ("Production" or "Sandbox") while the
    /// stand-in runs: transactions (replacing any with the same
    /// transactionId), notifications (sent now unless `_firstSendAttempt`
    /// says when; `_transactionId` links the transaction their payload
    /// carries, as it is at this moment), orders (order id → transaction ids).
    /// Returns the notifications' UUIDs.
    @discardableResult
    public func add(
        environment: String, transactions: [[String: Any]] = [], notifications: [[String: Any]] = [],
        orders: [String: [String]] = [:]
    ) async throws -> [String] {
        let answer = try await command([
            "op": "add", "env": environment, "transactions": transactions, "notifications": notifications,
            "orders": orders,
        ])
        return answer["notificationUUIDs"] as? [String] ?? []
    }

    /// Every request the stand-in received so far.
    public func requests() async throws -> [[String: Any]] {
        (try await command(["op": "requests"]))["requests"] as? [[String: Any]] ?? []
    }

    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// SIGTERM by PID, then SIGKILL if it has not exited within 5 s.
    public func stop() {
        let pid = process.processIdentifier
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        try? input.fileHandleForWriting.close()
    }

    deinit { stop() }
}

/// Lines from the child's stdout, handed from the reader thread to waiters.
final class LineQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var closed = false

    func push(_ line: String) {
        condition.lock()
        lines.append(line)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next line, or nil after `timeoutSeconds` or once the pipe closed.
    func pop(timeoutSeconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        condition.lock()
        defer { condition.unlock() }
        while lines.isEmpty && !closed {
            if !condition.wait(until: deadline) { break }
        }
        return lines.isEmpty ? nil : lines.removeFirst()
    }
}
