import Foundation
import Glibc

/// A service executable of this package started as a child process for
/// integration tests: it listens on 127.0.0.1 port 0 and announces
/// "<Name> listening on HOST:PORT" on stdout, which gives its port. Its
/// admin listener is on port 0 too (unless the environment sets
/// ADMIN_LISTEN_ADDR), announced first as "<Name> admin listening on ...".
public final class ServiceProcess: @unchecked Sendable {
    public let name: String
    public let process: Process
    public private(set) var port: Int = 0
    /// The admin listener's port (/metrics, /livez, /readyz); nil when off.
    public private(set) var adminPort: Int?
    private let output = Pipe()
    private let errors: FileHandle?
    /// Lines the process wrote to stderr (its JSON logs), when captured.
    public let logPath: String

    /// The folder holding the built products (next to the test bundle).
    public static var productsDirectory: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL
    }

    /// The repository root (config/ lives there).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Starts `executable` with `arguments` and `environment` added to ours,
    /// and waits (bounded) until it announces its port.
    public init(
        executable: String, arguments: [String] = [], environment: [String: String],
        startTimeout: Duration = .seconds(30)
    ) throws {
        name = executable
        process = Process()
        process.executableURL = Self.productsDirectory.appendingPathComponent(executable)
        process.arguments = ["--listen", "127.0.0.1:0"] + arguments
        process.currentDirectoryURL = Self.repositoryRoot
        var env = ProcessInfo.processInfo.environment
        // Never the fixed default ports: tests run side by side.
        env["ADMIN_LISTEN_ADDR"] = "127.0.0.1:0"
        env.merge(environment) { _, new in new }
        process.environment = env
        process.standardOutput = output
        logPath = NSTemporaryDirectory() + "/\(executable)-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        errors = FileHandle(forWritingAtPath: logPath)
        process.standardError = errors
        try process.run()
        port = try waitForPort(timeout: startTimeout)
    }

    private func waitForPort(timeout: Duration) throws -> Int {
        let deadline = ContinuousClock.now + timeout
        var buffer = Data()
        let handle = output.fileHandleForReading
        let fd = handle.fileDescriptor
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 200) > 0 else {
                if !process.isRunning { break }
                continue
            }
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            let text = String(decoding: buffer, as: UTF8.self)
            // Complete lines only: a port may still be arriving.
            let complete = text[..<(text.lastIndex(of: "\n") ?? text.startIndex)]
            for line in complete.split(separator: "\n") {
                guard let range = line.range(of: "listening on "),
                    let colon = line.lastIndex(of: ":"), colon > range.upperBound,
                    let port = Int(line[line.index(after: colon)...])
                else { continue }
                if line.contains(" admin listening on ") {
                    adminPort = port
                } else {
                    return port
                }
            }
        }
        process.terminate()
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw ServiceProcessError(description: "\(name) did not announce its port: \(String(log.suffix(2000)))")
    }

    /// SIGTERM, then waits for a graceful exit (SIGKILL after `timeout`).
    @discardableResult
    public func stop(timeout: Duration = .seconds(15)) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { usleep(10_000) }
        return process.terminationStatus
    }

    /// SIGKILL: a crash at an arbitrary point.
    public func kill9() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        while process.isRunning { usleep(10_000) }
    }

    /// Everything the process logged so far.
    public var logs: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? errors?.close()
    }
}

public struct ServiceProcessError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// The private cluster's connection strings (scripts/test.sh exports them).
public enum TestDatabases {
    public static func url(_ variable: String) throws -> String {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else {
            throw ServiceProcessError(
                description:
                    "\(variable) is not set: run scripts/test.sh, or eval \"$(scripts/pg.sh start | sed 's/^/export /')\""
            )
        }
        return url
    }
}
