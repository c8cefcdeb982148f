import Metrics
import XCTest

/// Many tasks update the same series while others render: every total is exact.
final class ConcurrencyTests: XCTestCase {
    func testConcurrentUpdatesAreAllCounted() async throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "c_total", help: "C.", labelNames: ["route", "status"])
        let gauge = try registry.makeGauge(name: "g", help: "G.")
        let histogram = try registry.makeHistogram(
            name: "h_seconds", help: "H.", labelNames: ["route"], buckets: HistogramBuckets([0.5]))
        let tasks = 16, iterations = 5_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    let route = task % 2 == 0 ? "/even" : "/odd"
                    for iteration in 0..<iterations {
                        counter.labels(route, "200").increment()
                        counter.labels("/all", "200").increment(by: 2)
                        gauge.increment()
                        if iteration % 2 == 0 { gauge.decrement(by: 2) }
                        histogram.labels(route).observe(iteration % 4 == 0 ? 1 : 0.25)
                    }
                }
            }
            group.addTask {
                for _ in 0..<50 { _ = registry.render() }
            }
        }
        XCTAssertEqual(counter.labels("/all", "200").value, Double(2 * tasks * iterations))
        XCTAssertEqual(counter.labels("/even", "200").value, Double(tasks / 2 * iterations))
        XCTAssertEqual(counter.labels("/odd", "200").value, Double(tasks / 2 * iterations))
        XCTAssertEqual(gauge.labels().value, 0)
        for route in ["/even", "/odd"] {
            XCTAssertEqual(histogram.labels(route).count, UInt64(tasks / 2 * iterations))
            XCTAssertEqual(
                histogram.labels(route).sum,
                Double(tasks / 2) * (Double(iterations / 4) * 1 + Double(iterations * 3 / 4) * 0.25))
        }
        let text = registry.render()
        XCTAssertTrue(text.contains("h_seconds_bucket{route=\"/even\",le=\"0.5\"} \(tasks / 2 * iterations * 3 / 4)\n"))
        XCTAssertTrue(text.contains("h_seconds_bucket{route=\"/even\",le=\"+Inf\"} \(tasks / 2 * iterations)\n"))
    }

    func testConcurrentFirstUsesOfOneLabelSetMakeOneSeries() async throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "c_total", help: "C.", labelNames: ["k"], seriesMax: 8)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for key in 0..<20 { counter.labels("\(key)").increment() } }
            }
        }
        let lines = registry.render().split(separator: "\n").filter { $0.hasPrefix("c_total{") }
        XCTAssertEqual(lines.count, 9)
        XCTAssertEqual(counter.labels("other").value, Double(8 * 12))
        XCTAssertTrue(registry.render().contains("metrics_label_overflow_total{metric=\"c_total\"} \(8 * 12)\n"))
    }
}
