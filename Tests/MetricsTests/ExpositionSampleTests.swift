import Foundation
import Metrics
import XCTest

/// The samples in Fixtures/ are exactly what the code renders (promtool
/// checks those files in Tests/interop/test_prometheus.py), and together
/// they show every family with at least one series. After an intended
/// change, rewrite them with
/// `METRICS_UPDATE_GOLDEN=1 swift test --skip-build --filter MetricsTests.ExpositionSampleTests`
/// (the run then fails once, to say so) and review the diff.
final class ExpositionSampleTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    func testTheRenderedSamplesAreTheGoldenFiles() throws {
        let update = ProcessInfo.processInfo.environment["METRICS_UPDATE_GOLDEN"] == "1"
        for (file, text) in try ExpositionSamples.all() {
            let url = Self.fixtures.appendingPathComponent(file)
            if update {
                try text.write(to: url, atomically: true, encoding: .utf8)
                XCTFail("rewrote \(file): review the diff and run again without METRICS_UPDATE_GOLDEN")
                continue
            }
            let golden = try String(contentsOf: url, encoding: .utf8)
            XCTAssertEqual(
                text, golden, "\(file) differs from the rendered sample (see the test's comment to rewrite it)")
        }
    }

    func testTheServiceSamplesShowEveryFamilyWithASeries() throws {
        let samples = [
            try ExpositionSamples.gateway(), try ExpositionSamples.payments(), try ExpositionSamples.points(),
        ]
        var withSamples = Set<String>()
        var declared = Set<String>()
        for text in samples {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("# TYPE ") { declared.insert(String(line.split(separator: " ")[2])) }
                if !line.hasPrefix("#") { withSamples.insert(Self.familyName(ofSample: String(line))) }
            }
        }
        let expected = Set(IAPMetricNames.all.map(\.name)).union([
            ProcessMetrics.residentMemoryBytes, ProcessMetrics.openFileDescriptors, ProcessMetrics.cpuSecondsTotal,
            ProcessMetrics.startTimeSeconds,
            "metrics_label_overflow_total",
        ])
        XCTAssertEqual(declared, expected)
        // The overflow counter has a series only after an overflow (format.prom shows one).
        XCTAssertEqual(withSamples, expected.subtracting(["metrics_label_overflow_total"]))
        XCTAssertTrue(
            try ExpositionSamples.format().contains(
                "metrics_label_overflow_total{metric=\"sample_bounded_seconds\"} 2\n"))
    }

    func testEveryDescriptorRegistersAndNamesAreUnique() throws {
        let registry = MetricsRegistry()
        for descriptor in IAPMetricNames.all {
            switch descriptor.kind {
            case .counter: _ = try registry.makeCounter(descriptor)
            case .gauge: _ = try registry.makeGauge(descriptor)
            case .histogram: _ = try registry.makeHistogram(descriptor)
            }
            XCTAssertTrue(descriptor.name.hasPrefix("iap_"), descriptor.name)
            XCTAssertTrue(descriptor.help.hasSuffix("."), descriptor.name)
        }
        XCTAssertEqual(registry.familyNames.count, IAPMetricNames.all.count + 1)
    }

    func testTheSeriesAlertsWatchExistAtZeroFromTheStart() throws {
        let registry = MetricsRegistry()
        _ = try PaymentsMetrics(registry: registry, processSampler: { ExpositionSamples.process })
        let text = registry.render()
        for line in [
            #"iap_saga_steps_total{step="grant",outcome="needs_operator"} 0"#,
            #"iap_saga_steps_total{step="reversal",outcome="stale"} 0"#,
            #"iap_clawbacks_total{result="overdue"} 0"#,
            #"iap_saga_stuck_rows{step="clawback"} 0"#,
            #"iap_dependency_up{dependency="database"} 0"#,
            "iap_catalog_missing_products_total 0",
            "iap_overdue_credits_total 0",
            "iap_db_pool_acquire_timeouts_total 0",
        ] {
            XCTAssertTrue(text.contains(line + "\n"), line)
        }
    }

    func testAClawbackThatLeftCreditsOverdueCountsThem() throws {
        let registry = MetricsRegistry()
        let metrics = try PaymentsMetrics(registry: registry, processSampler: { nil })
        metrics.recordClawback(overdueCredits: 70)
        metrics.recordClawback(overdueCredits: 0)
        metrics.recordClawback(overdueCredits: 5)
        XCTAssertEqual(metrics.clawbacks.labels("overdue").value, 2)
        XCTAssertEqual(metrics.clawbacks.labels("covered").value, 1)
        XCTAssertEqual(metrics.overdueCredits.labels().value, 75)
    }

    func testUnusualMethodsAreBoundedToOther() throws {
        let registry = MetricsRegistry()
        let metrics = try GatewayMetrics(registry: registry, processSampler: { nil })
        for method in ["GET", "BREW", "get", String(repeating: "X", count: 500)] {
            metrics.recordRequest(route: IAPMetricLabels.unmatchedRoute, method: method, status: 404, duration: .zero)
        }
        XCTAssertEqual(metrics.httpRequests.labels("unmatched", "GET", "404").value, 1)
        XCTAssertEqual(metrics.httpRequests.labels("unmatched", "other", "404").value, 3)
    }

    /// `name` of `name{...} value` or `name value`, without a histogram's suffix.
    static func familyName(ofSample line: String) -> String {
        let name = String(line.prefix { $0 != "{" && $0 != " " })
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) && !name.hasSuffix("_total") {
            let base = String(name.dropLast(suffix.count))
            if IAPMetricNames.all.contains(where: { $0.name == base && $0.kind == .histogram }) { return base }
        }
        return name
    }
}
