@testable import Metrics
import XCTest

final class HistogramTests: XCTestCase {
    private func bucketLines(_ registry: MetricsRegistry, _ name: String) -> [String] {
        registry.render().split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "_") }
    }

    func testBucketsAreCumulativeAndUpperBoundsInclusive() throws {
        let registry = MetricsRegistry()
        let histogram = try registry.makeHistogram(name: "h_seconds", help: "H.", buckets: HistogramBuckets([1, 2, 4]))
        for value in [-5, 0, 1, 1.000001, 2, 3.5, 4, 4.5, .infinity] { histogram.observe(value) }
        XCTAssertEqual(
            bucketLines(registry, "h_seconds"),
            [
                #"h_seconds_bucket{le="1"} 3"#,
                #"h_seconds_bucket{le="2"} 5"#,
                #"h_seconds_bucket{le="4"} 7"#,
                #"h_seconds_bucket{le="+Inf"} 9"#,
                "h_seconds_sum +Inf",
                "h_seconds_count 9",
            ])
    }

    func testANewSeriesRendersEveryBucketAtZero() throws {
        let registry = MetricsRegistry()
        let histogram = try registry.makeHistogram(
            name: "h_seconds", help: "H.", labelNames: ["route"], buckets: HistogramBuckets([0.5]))
        _ = histogram.labels("/x")
        XCTAssertEqual(
            bucketLines(registry, "h_seconds"),
            [
                #"h_seconds_bucket{route="/x",le="0.5"} 0"#,
                #"h_seconds_bucket{route="/x",le="+Inf"} 0"#,
                #"h_seconds_sum{route="/x"} 0"#,
                #"h_seconds_count{route="/x"} 0"#,
            ])
    }

    func testTheDefaultLatencyBucketsAreSecondsFrom5MillisecondsTo10Seconds() throws {
        let registry = MetricsRegistry()
        let histogram = try registry.makeHistogram(name: "latency_seconds", help: "L.")
        histogram.observe(Duration.milliseconds(30))
        histogram.observe(Duration.seconds(2) + .microseconds(1))
        let bounds = bucketLines(registry, "latency_seconds").compactMap { line -> String? in
            guard let start = line.range(of: "le=\"")?.upperBound, let end = line[start...].firstIndex(of: "\"") else {
                return nil
            }
            return String(line[start..<end])
        }
        XCTAssertEqual(bounds, ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"])
        XCTAssertTrue(
            registry.render().contains(
                "latency_seconds_bucket{le=\"0.025\"} 0\nlatency_seconds_bucket{le=\"0.05\"} 1\n"))
        XCTAssertTrue(
            registry.render().contains("latency_seconds_bucket{le=\"1\"} 1\nlatency_seconds_bucket{le=\"2.5\"} 2\n"))
        XCTAssertEqual(histogram.labels().sum, 2.030001, accuracy: 1e-12)
        XCTAssertEqual(histogram.labels().count, 2)
    }

    func testBinarySearchAgreesWithALinearScan() {
        let series = HistogramSeries(upperBounds: HistogramBuckets.poolWaitSeconds.upperBounds)
        var generator = SystemRandomNumberGenerator()
        let bounds = series.upperBounds
        var values =
            bounds + bounds.map { $0.nextUp } + bounds.map { $0.nextDown } + [-1, 0, 1e9, -.infinity, .infinity]
        for _ in 0..<10_000 { values.append(Double.random(in: -1...6, using: &generator)) }
        for value in values {
            let linear = bounds.firstIndex(where: { value <= $0 }) ?? bounds.count
            XCTAssertEqual(series.bucketIndex(value), linear, "\(value)")
        }
    }

    func testNaNIsNotObservedInReleaseBuilds() throws {
        // The debug build asserts (a NaN latency is a bug); this checks only
        // that the counts stay untouched by the guard, in a build without asserts.
        #if !DEBUG
        let series = HistogramSeries(upperBounds: [1])
        series.observe(.nan)
        XCTAssertEqual(series.count, 0)
        XCTAssertEqual(series.sum, 0)
        #endif
    }

    func testInvalidBucketsAreRefused() {
        let registry = MetricsRegistry()
        let cases: [[Double]] = [
            [], [1, 1], [2, 1], [0.1, .nan], [0.1, .infinity], [-.infinity, 1],
            (0...MetricsLimits.bucketsMax).map(Double.init),
        ]
        for (index, bounds) in cases.enumerated() {
            XCTAssertThrowsError(
                try registry.makeHistogram(name: "h\(index)", help: "H.", buckets: HistogramBuckets(bounds)),
                "\(bounds)"
            ) { error in
                XCTAssertEqual((error as? MetricsRegistrationError)?.code, .invalidBuckets)
            }
        }
        XCTAssertNoThrow(
            try registry.makeHistogram(
                name: "ok", help: "H.", buckets: HistogramBuckets((1...MetricsLimits.bucketsMax).map(Double.init))))
        XCTAssertNoThrow(
            try registry.makeHistogram(name: "negative", help: "H.", buckets: HistogramBuckets([-1, 0, 1])))
    }
}
