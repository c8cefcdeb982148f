@testable import Metrics
import XCTest

/// The text exposition format 0.0.4, byte for byte.
final class ExpositionFormatTests: XCTestCase {
    func testEveryKindRendersExactlyInNameAndLabelOrder() throws {
        let registry = MetricsRegistry()
        let requests = try registry.makeCounter(
            name: "http_requests_total", help: "Requests answered.", labelNames: ["route", "status"])
        let inUse = try registry.makeGauge(name: "pool_connections_in_use", help: "Connections lent out.")
        let latency = try registry.makeHistogram(
            name: "http_request_duration_seconds", help: "Time to answer.",
            labelNames: ["route"], buckets: HistogramBuckets([0.1, 0.5, 1]))
        let restarts = try registry.makeCounter(name: "restarts_total", help: "Restarts.")
        requests.labels("/b", "200").increment()
        requests.labels("/a", "500").increment(by: 2)
        requests.labels("/a", "200").increment()
        requests.labels("/a", "200").increment()
        inUse.set(3)
        inUse.decrement()
        latency.labels("/a").observe(0.1)
        latency.labels("/a").observe(0.25)
        latency.labels("/a").observe(7)
        restarts.increment(by: 0.5)

        XCTAssertEqual(
            registry.render(),
            """
            # HELP http_request_duration_seconds Time to answer.
            # TYPE http_request_duration_seconds histogram
            http_request_duration_seconds_bucket{route="/a",le="0.1"} 1
            http_request_duration_seconds_bucket{route="/a",le="0.5"} 2
            http_request_duration_seconds_bucket{route="/a",le="1"} 2
            http_request_duration_seconds_bucket{route="/a",le="+Inf"} 3
            http_request_duration_seconds_sum{route="/a"} 7.35
            http_request_duration_seconds_count{route="/a"} 3
            # HELP http_requests_total Requests answered.
            # TYPE http_requests_total counter
            http_requests_total{route="/a",status="200"} 2
            http_requests_total{route="/a",status="500"} 2
            http_requests_total{route="/b",status="200"} 1
            # HELP metrics_label_overflow_total Observations sent to a family's "other" series because the family reached its series bound or a label value was too long.
            # TYPE metrics_label_overflow_total counter
            # HELP pool_connections_in_use Connections lent out.
            # TYPE pool_connections_in_use gauge
            pool_connections_in_use 2
            # HELP restarts_total Restarts.
            # TYPE restarts_total counter
            restarts_total 0.5

            """)
    }

    func testLabelValuesEscapeBackslashQuoteAndNewlineOnly() throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "events_total", help: "Events.", labelNames: ["reason"])
        counter.labels(#"C:\dir "quoted""# + "\nnext\ttab é 🙂").increment()
        XCTAssertTrue(
            registry.render().contains(#"events_total{reason="C:\\dir \"quoted\"\nnext"# + "\ttab é 🙂\"} 1\n"))
    }

    func testHelpEscapesBackslashAndNewlineButNotQuotes() throws {
        let registry = MetricsRegistry()
        _ = try registry.makeGauge(name: "g", help: #"a "quoted" \ path"# + "\nsecond line")
        XCTAssertTrue(
            registry.render().contains(#"# HELP g a "quoted" \\ path\nsecond line"# + "\n# TYPE g gauge\ng 0\n"))
    }

    func testAFamilyWithLabelsAndNoSeriesRendersOnlyItsHeader() throws {
        let registry = MetricsRegistry()
        _ = try registry.makeCounter(name: "never_total", help: "Never counted.", labelNames: ["kind"])
        XCTAssertEqual(
            registry.render(),
            """
            # HELP metrics_label_overflow_total Observations sent to a family's "other" series because the family reached its series bound or a label value was too long.
            # TYPE metrics_label_overflow_total counter
            # HELP never_total Never counted.
            # TYPE never_total counter

            """)
    }

    func testResolvingALabelSetCreatesItsSeriesAtZero() throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "steps_total", help: "Steps.", labelNames: ["step", "outcome"])
        _ = counter.labels("grant", "needs_operator")
        XCTAssertTrue(registry.render().contains("steps_total{step=\"grant\",outcome=\"needs_operator\"} 0\n"))
    }

    func testSampleValuesFormatAsPrometheusParsesThem() {
        let cases: [(Double, String)] = [
            (0, "0"), (-0.0, "0"), (1, "1"), (-3, "-3"), (42, "42"), (10, "10"),
            (0.005, "0.005"), (2.5, "2.5"), (0.1, "0.1"), (7.35, "7.35"), (1e-05, "1e-05"), (123.456, "123.456"),
            (1_700_000_000, "1700000000"), (1_700_000_000.25, "1700000000.25"),
            (9_007_199_254_740_991, "9007199254740991"), (9_007_199_254_740_992, "9007199254740992"),
            (1e16, "10000000000000000"), (-9.2e18, "-9200000000000000000"), (9.3e18, "9.3e+18"),
            (1.5e20, "1.5e+20"), (-2.5e-7, "-2.5e-07"),
            (.infinity, "+Inf"), (-.infinity, "-Inf"), (.nan, "NaN"),
            (Double.greatestFiniteMagnitude, "1.7976931348623157e+308"), (Double.leastNonzeroMagnitude, "5e-324"),
        ]
        for (value, text) in cases {
            XCTAssertEqual(ExpositionWriter.format(value), text, "\(value)")
            if value.isFinite { XCTAssertEqual(Double(text), value, text) }
        }
    }

    func testSeriesAreOrderedByLabelValuesWhateverTheOrderOfFirstUse() throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "c_total", help: "C.", labelNames: ["a", "b"])
        for (a, b) in [("y", "2"), ("x", "9"), ("y", "10"), ("x", "1")] { counter.labels(a, b).increment() }
        let lines = registry.render().split(separator: "\n").filter { $0.hasPrefix("c_total{") }
        XCTAssertEqual(
            lines,
            [
                #"c_total{a="x",b="1"} 1"#, #"c_total{a="x",b="9"} 1"#, #"c_total{a="y",b="10"} 1"#,
                #"c_total{a="y",b="2"} 1"#,
            ])
    }

    func testTheArrayFormOfLabelsResolvesTheSameSeries() throws {
        let registry = MetricsRegistry()
        let counter = try registry.makeCounter(name: "c_total", help: "C.", labelNames: ["a", "b", "c", "d"])
        XCTAssertTrue(counter.labels(["1", "2", "3", "4"]) === counter.labels("1", "2", "3", "4"))
        let plain = try registry.makeCounter(name: "p_total", help: "P.")
        XCTAssertTrue(plain.labels([]) === plain.labels())
    }
}
