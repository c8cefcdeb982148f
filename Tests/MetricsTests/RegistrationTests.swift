import Metrics
import XCTest

/// The registry refuses what Prometheus would refuse or misread.
final class RegistrationTests: XCTestCase {
    private func assertRefused(
        _ code: MetricsRegistrationError.Code, _ message: String = "", file: StaticString = #filePath,
        line: UInt = #line,
        _ register: () throws -> Any
    ) {
        XCTAssertThrowsError(try register(), message, file: file, line: line) { error in
            XCTAssertEqual(
                (error as? MetricsRegistrationError)?.code, code, "\(message): \(error)", file: file, line: line)
        }
    }

    func testInvalidMetricNamesAreRefused() {
        let registry = MetricsRegistry()
        let long = String(repeating: "a", count: MetricsLimits.nameBytesMax + 1)
        for name in ["", "1abc", "a-b", "a b", "a.b", "é", "a\u{0}", "__reserved", "a{b}", "a\"b", long, "ａbc"] {
            assertRefused(.invalidMetricName, name) { try registry.makeGauge(name: name, help: "X.") }
            if !name.isEmpty {  // "_total" alone is a valid name
                assertRefused(.invalidMetricName, name) { try registry.makeCounter(name: name + "_total", help: "X.") }
            }
        }
        assertRefused(.invalidMetricName, "counter without _total") {
            try registry.makeCounter(name: "requests", help: "X.")
        }
        assertRefused(.invalidMetricName, "gauge with _total") {
            try registry.makeGauge(name: "requests_total", help: "X.")
        }
        assertRefused(.invalidMetricName, "histogram with _total") {
            try registry.makeHistogram(name: "requests_total", help: "X.")
        }
    }

    func testValidMetricNamesAreAccepted() throws {
        let registry = MetricsRegistry()
        let long = String(repeating: "a", count: MetricsLimits.nameBytesMax)
        for name in ["a", "_a", ":a", "a:b:c", "A_b9", "_", long] {
            XCTAssertNoThrow(try registry.makeGauge(name: name, help: "X."), name)
        }
        XCTAssertNoThrow(try registry.makeCounter(name: "job:requests:rate5m_total", help: "X."))
    }

    func testInvalidLabelNamesAreRefused() {
        let registry = MetricsRegistry()
        for label in [
            "", "1a", "a:b", "a-b", "a b", "é", "__name__", "__a", "le", "quantile",
            String(repeating: "l", count: MetricsLimits.nameBytesMax + 1),
        ] {
            assertRefused(.invalidLabelName, label) {
                try registry.makeCounter(name: "c_total", help: "X.", labelNames: [label])
            }
        }
        assertRefused(.duplicateLabelName) {
            try registry.makeCounter(name: "c_total", help: "X.", labelNames: ["a", "b", "a"])
        }
        assertRefused(.tooManyLabelNames) {
            try registry.makeCounter(name: "c_total", help: "X.", labelNames: ["a", "b", "c", "d", "e"])
        }
        XCTAssertNoThrow(try registry.makeCounter(name: "c_total", help: "X.", labelNames: ["a", "_b", "C9", "_"]))
    }

    func testDuplicateNamesAndCollidingSampleNamesAreRefused() throws {
        let registry = MetricsRegistry()
        _ = try registry.makeCounter(name: "requests_total", help: "X.")
        assertRefused(.duplicateMetricName) {
            try registry.makeCounter(name: "requests_total", help: "Y.", labelNames: ["a"])
        }
        _ = try registry.makeGauge(name: "latency_bucket", help: "X.")
        assertRefused(.duplicateMetricName, "histogram over a gauge's name") {
            try registry.makeHistogram(name: "latency", help: "X.")
        }
        _ = try registry.makeHistogram(name: "wait_seconds", help: "X.")
        for name in ["wait_seconds", "wait_seconds_bucket", "wait_seconds_sum", "wait_seconds_count"] {
            assertRefused(.duplicateMetricName, name) { try registry.makeGauge(name: name, help: "X.") }
        }
        assertRefused(.duplicateMetricName, "the registry's own counter") {
            try registry.makeCounter(name: "metrics_label_overflow_total", help: "X.")
        }
        XCTAssertEqual(
            registry.familyNames, ["latency_bucket", "metrics_label_overflow_total", "requests_total", "wait_seconds"])
    }

    func testHelpAndSeriesBoundsAreChecked() {
        let registry = MetricsRegistry()
        assertRefused(.invalidHelp) { try registry.makeGauge(name: "g", help: "") }
        assertRefused(.invalidHelp) {
            try registry.makeGauge(name: "g", help: String(repeating: "h", count: MetricsLimits.helpBytesMax + 1))
        }
        assertRefused(.invalidSeriesMax) {
            try registry.makeGauge(name: "g", help: "G.", labelNames: ["a"], seriesMax: 0)
        }
        assertRefused(.invalidSeriesMax) {
            try registry.makeGauge(name: "g", help: "G.", seriesMax: MetricsLimits.seriesPerFamilyMax + 1)
        }
        XCTAssertNoThrow(
            try registry.makeGauge(
                name: "g", help: String(repeating: "h", count: MetricsLimits.helpBytesMax),
                seriesMax: MetricsLimits.seriesPerFamilyMax))
    }

    func testARefusedRegistrationLeavesTheRegistryUnchanged() throws {
        let registry = MetricsRegistry()
        let before = registry.render()
        assertRefused(.invalidLabelName) { try registry.makeGauge(name: "g", help: "G.", labelNames: ["le"]) }
        assertRefused(.invalidBuckets) {
            try registry.makeHistogram(name: "h", help: "H.", buckets: HistogramBuckets([]))
        }
        XCTAssertEqual(registry.render(), before)
        XCTAssertNoThrow(try registry.makeGauge(name: "g", help: "G."))
        XCTAssertNoThrow(try registry.makeHistogram(name: "h", help: "H."))
    }

    func testTheRegistryIsBounded() throws {
        let registry = MetricsRegistry()
        for index in 1..<MetricsLimits.familiesMax {
            _ = try registry.makeGauge(name: "g\(index)", help: "G.")
        }
        assertRefused(.registryFull) { try registry.makeGauge(name: "one_more", help: "G.") }
        for _ in 0..<MetricsLimits.collectorsMax { try registry.addCollector {} }
        assertRefused(.registryFull) { try registry.addCollector {} }
    }

    func testCollectorsRunBeforeEveryRender() throws {
        let registry = MetricsRegistry()
        let gauge = try registry.makeGauge(name: "renders", help: "Renders so far.")
        try registry.addCollector { gauge.increment() }
        XCTAssertTrue(registry.render().contains("\nrenders 1\n"))
        XCTAssertTrue(registry.render().contains("\nrenders 2\n"))
    }

    func testErrorsNameTheMetricAndTheRule() {
        let registry = MetricsRegistry()
        XCTAssertThrowsError(try registry.makeCounter(name: "requests", help: "X.")) { error in
            XCTAssertEqual("\(error)", "metric requests: invalid_metric_name: a counter's name ends in _total")
        }
    }
}
