@testable import Metrics
import XCTest

/// A family holds at most its bound of label sets; the rest goes to the
/// `other` series and is counted in `metrics_label_overflow_total`.
final class CardinalityTests: XCTestCase {
    private func samples(_ registry: MetricsRegistry) -> [String] {
        registry.render().split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    func testLabelSetsPastTheBoundGoToOtherAndAreCounted() throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "c_total", help: "C.", labelNames: ["user", "kind"], seriesMax: 3)
        for user in ["a", "b", "c", "d", "e"] { counter.labels(user, "x").increment() }
        counter.labels("e", "x").increment(by: 5)
        counter.labels("a", "x").increment()  // admitted earlier: still its own series
        XCTAssertEqual(
            samples(registry),
            [
                #"c_total{user="a",kind="x"} 2"#,
                #"c_total{user="b",kind="x"} 1"#,
                #"c_total{user="c",kind="x"} 1"#,
                #"c_total{user="other",kind="other"} 7"#,
                #"metrics_label_overflow_total{metric="c_total"} 3"#,
            ])
    }

    func testALabelValueTooLongGoesToOtherEvenBelowTheBound() throws {
        let registry = MetricsRegistry()
        let gauge = try registry.makeGauge(name: "g", help: "G.", labelNames: ["v"])
        gauge.labels(String(repeating: "x", count: MetricsLimits.labelValueBytesMax)).set(1)
        gauge.labels(String(repeating: "é", count: MetricsLimits.labelValueBytesMax / 2 + 1)).set(2)
        XCTAssertEqual(
            samples(registry),
            [
                #"g{v="other"} 2"#,
                "g{v=\"\(String(repeating: "x", count: MetricsLimits.labelValueBytesMax))\"} 1",
                #"metrics_label_overflow_total{metric="g"} 1"#,
            ])
    }

    func testARealOtherValueAndTheOverflowShareOneSeries() throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "c_total", help: "C.", labelNames: ["k"], seriesMax: 2)
        counter.labels("other").increment()
        counter.labels("a").increment()
        counter.labels("b").increment()
        XCTAssertEqual(
            samples(registry),
            [
                #"c_total{k="a"} 1"#,
                #"c_total{k="other"} 2"#,
                #"metrics_label_overflow_total{metric="c_total"} 1"#,
            ])
    }

    func testEachFamilyIsBoundedAndCountedOnItsOwn() throws {
        let registry = MetricsRegistry()
        let first = try registry.makeCounter(name: "a_total", help: "A.", labelNames: ["k"], seriesMax: 1)
        let second = try registry.makeHistogram(
            name: "b_seconds", help: "B.", labelNames: ["k"], buckets: HistogramBuckets([1]), seriesMax: 2)
        for key in ["1", "2", "3", "4"] {
            first.labels(key).increment()
            second.labels(key).observe(0.5)
        }
        let text = registry.render()
        XCTAssertTrue(text.contains(#"metrics_label_overflow_total{metric="a_total"} 3"#))
        XCTAssertTrue(text.contains(#"metrics_label_overflow_total{metric="b_seconds"} 2"#))
        XCTAssertTrue(text.contains(#"b_seconds_count{k="other"} 2"#))
        XCTAssertEqual(text.components(separatedBy: "b_seconds_count{").count - 1, 3)
    }

    func testManyDistinctValuesStayWithinTheBound() throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "c_total", help: "C.", labelNames: ["id"])
        for id in 0..<10_000 { counter.labels("\(id)").increment() }
        let series = samples(registry).filter { $0.hasPrefix("c_total{") }
        XCTAssertEqual(series.count, MetricsLimits.seriesPerFamilyDefault + 1)
        XCTAssertTrue(series.contains("c_total{id=\"other\"} \(10_000 - MetricsLimits.seriesPerFamilyDefault)"))
    }
}
