import Foundation
@testable import Metrics
import XCTest

final class ProcessMetricsTests: XCTestCase {
    func testStatIsParsedFromTheLastParenthesisOn() throws {
        // A command name with spaces and parentheses; fields from proc(5).
        let text =
            "31077 (my (odd) name) R 31055 31055 9901 0 -1 4194304 662 0 0 0 250 75 0 0 20 0 1 0 412865 71757824 4041 18446744073709551615 0 0\n"
        XCTAssertEqual(ProcStatParser.selfStat(text), .init(cpuTicks: 325, startTicks: 412865, residentPages: 4041))
        XCTAssertNil(ProcStatParser.selfStat("31077 (t) R 1 2 3"))
        XCTAssertNil(ProcStatParser.selfStat("no parenthesis at all"))
        XCTAssertNil(ProcStatParser.selfStat("1 (t) R 1 1 1 0 -1 0 0 0 0 0 x 75 0 0 20 0 1 0 1 1 1"))
    }

    func testBootTimeIsTheBtimeLine() {
        XCTAssertEqual(
            ProcStatParser.bootTimeSeconds("cpu  1 2 3\nintr 5\nbtime 1796040868\nprocesses 9\n"), 1_796_040_868)
        XCTAssertNil(ProcStatParser.bootTimeSeconds("cpu  1 2 3\n"))
    }

    func testTheSampleArithmetic() {
        let sample = ProcessSample(
            .init(cpuTicks: 325, startTicks: 412_865, residentPages: 4041), bootTimeSeconds: 1_796_040_868,
            openFileDescriptors: 12, clockTicksPerSecond: 100, pageSizeBytes: 4096)
        XCTAssertEqual(
            sample,
            ProcessSample(
                residentMemoryBytes: 16_551_936, openFileDescriptors: 12, cpuSeconds: 3.25,
                startTimeSeconds: 1_796_044_996.65))
    }

    func testTheFourFamiliesRenderAndRefreshAtRenderTime() throws {
        let registry = MetricsRegistry()
        let samples = SampleQueue([
            ProcessSample(
                residentMemoryBytes: 1_048_576, openFileDescriptors: 7, cpuSeconds: 0.5,
                startTimeSeconds: 1_796_044_996.65),
            ProcessSample(
                residentMemoryBytes: 2_097_152, openFileDescriptors: 9, cpuSeconds: 1.25,
                startTimeSeconds: 1_796_044_996.65),
        ])
        XCTAssertTrue(try ProcessMetrics.register(in: registry, sampler: samples.next))
        let text = registry.render()
        XCTAssertTrue(
            text.contains(
                """
                # HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
                # TYPE process_cpu_seconds_total counter
                process_cpu_seconds_total 1.25
                # HELP process_open_fds Number of open file descriptors.
                # TYPE process_open_fds gauge
                process_open_fds 9
                # HELP process_resident_memory_bytes Resident memory size in bytes.
                # TYPE process_resident_memory_bytes gauge
                process_resident_memory_bytes 2097152
                # HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
                # TYPE process_start_time_seconds gauge
                process_start_time_seconds 1796044996.65

                """), text)
        // The sampler has nothing more: the last values stay.
        XCTAssertTrue(registry.render().contains("process_open_fds 9\n"))
    }

    func testNothingIsRegisteredWithoutASample() throws {
        let registry = MetricsRegistry()
        XCTAssertFalse(try ProcessMetrics.register(in: registry, sampler: { nil }))
        XCTAssertEqual(registry.familyNames, ["metrics_label_overflow_total"])
    }

    func testThisProcessIsReadFromProc() throws {
        #if os(Linux)
        let sample = try XCTUnwrap(ProcessSample.current())
        XCTAssertGreaterThan(sample.residentMemoryBytes, 1_000_000)
        XCTAssertGreaterThan(sample.cpuSeconds, 0)
        let now = Date().timeIntervalSince1970
        XCTAssertLessThan(sample.startTimeSeconds, now + 1)
        XCTAssertGreaterThan(sample.startTimeSeconds, now - 24 * 3600)
        let before = sample.openFileDescriptors
        let handles = (0..<5).compactMap { _ in FileHandle(forReadingAtPath: "/proc/self/stat") }
        // Other tests' threads may open or close descriptors meanwhile; ours are there.
        XCTAssertGreaterThanOrEqual(
            try XCTUnwrap(ProcessSample.current()).openFileDescriptors, before + Double(handles.count) - 2)
        XCTAssertEqual(handles.count, 5)
        #endif
    }
}

/// Hands out fixed samples in order, then nil.
private final class SampleQueue: @unchecked Sendable {
    private var samples: [ProcessSample]
    private let lock = NSLock()

    init(_ samples: [ProcessSample]) { self.samples = samples }

    var next: @Sendable () -> ProcessSample? {
        { [self] in lock.withLock { samples.isEmpty ? nil : samples.removeFirst() } }
    }
}
