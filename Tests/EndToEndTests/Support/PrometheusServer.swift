import Foundation
import Glibc
import TestSupport

/// A real Prometheus (Debian's `prometheus` package) for one test: on
/// 127.0.0.1 at a free port, with its own temporary storage and a generated
/// configuration scraping the given targets every second. Stopped by its
/// PID (SIGTERM, then SIGKILL after a bound); its folder is removed.
final class PrometheusServer: @unchecked Sendable {
    static let binary = "/usr/bin/prometheus"
    static let startAttemptsMax = 150
    static let pollPauseMilliseconds = 100

    let port: Int
    let directory: String
    private let process = Process()

    /// `jobs`: job name to admin port, each scraped at 127.0.0.1.
    init(jobs: [(name: String, port: Int)]) throws {
        directory = NSTemporaryDirectory() + "prometheus-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        var config =
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
        for job in jobs {
            config += "  - job_name: \(job.name)\n    static_configs:\n      - targets: [\"127.0.0.1:\(job.port)\"]\n"
        }
        try Data(config.utf8).write(to: URL(fileURLWithPath: directory + "/prometheus.yml"))
        port = try Self.freePort()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [
            "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ]
        _ = FileManager.default.createFile(atPath: directory + "/prometheus.log", contents: nil)
        let log = FileHandle(forWritingAtPath: directory + "/prometheus.log")
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    var logs: String { (try? String(contentsOfFile: directory + "/prometheus.log", encoding: .utf8)) ?? "" }

    /// Waits (bounded) for /-/ready.
    func waitUntilReady() async throws {
        for _ in 0..<Self.startAttemptsMax {
            if let answer = try? await HTTPExchange.send(
                port: port, method: "GET", path: "/-/ready", headers: [], body: nil),
                answer.status == 200
            {
                return
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(Self.pollPauseMilliseconds))
        }
        throw HTTPExchangeError(description: "Prometheus did not become ready: \(logs.suffix(2000))")
    }

    /// An instant query through the HTTP API: each series' labels and value.
    func query(_ expression: String) async throws -> [(labels: [String: String], value: Double)] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        let answer = try await HTTPExchange.send(
            port: port, method: "GET", path: "/api/v1/query?query=\(encoded)", headers: [], body: nil)
        guard answer.status == 200, answer.json["status"] as? String == "success",
            let data = answer.json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else {
            throw HTTPExchangeError(description: "query \(expression) answered \(answer.status): \(answer.text)")
        }
        return result.map { series in
            let labels = series["metric"] as? [String: String] ?? [:]
            let value =
                (series["value"] as? [Any]).flatMap { $0.count == 2 ? $0[1] as? String : nil }.flatMap(Double.init)
                ?? .nan
            return (labels, value)
        }
    }

    /// The single value of `expression`, nil when it has no series.
    func scalar(_ expression: String) async throws -> Double? {
        try await query(expression).first?.value
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            while process.isRunning { usleep(10_000) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// A port the kernel hands out for 127.0.0.1 now (closed again at once;
    /// Prometheus binds it right after).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPExchangeError(description: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw HTTPExchangeError(description: "bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
