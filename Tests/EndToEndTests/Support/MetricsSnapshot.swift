import Foundation

/// One scrape of a process's `GET /metrics` (its admin port), read as
/// sample lines: `name{label="value",...} number`, keyed by everything
/// before the value exactly as the process renders it (labels in their
/// declared order).
struct MetricsSnapshot: Sendable {
    let text: String
    let samples: [String: Double]

    static func scrape(adminPort: Int) async throws -> MetricsSnapshot {
        let answer = try await HTTPExchange.send(
            port: adminPort, method: "GET", path: "/metrics", headers: [], body: nil)
        guard answer.status == 200 else {
            throw HTTPExchangeError(description: "/metrics answered \(answer.status): \(answer.text)")
        }
        return MetricsSnapshot(text: answer.text)
    }

    init(text: String) {
        self.text = text
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        self.samples = samples
    }

    /// The value of `name{labels}` (labels in declared order), 0 when absent.
    func value(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> Double {
        samples[Self.key(name, labels)] ?? 0
    }

    static func key(_ name: String, _ labels: KeyValuePairs<String, String>) -> String {
        labels.isEmpty ? name : name + "{" + labels.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ",") + "}"
    }
}
