/// The process metrics Prometheus's own clients export, under the same
/// names so standard dashboards and alerts work: `process_resident_memory_bytes`,
/// `process_open_fds`, `process_cpu_seconds_total` and
/// `process_start_time_seconds`, refreshed from /proc each time the
/// registry renders.
public enum ProcessMetrics {
    public static let residentMemoryBytes = "process_resident_memory_bytes"
    public static let openFileDescriptors = "process_open_fds"
    public static let cpuSecondsTotal = "process_cpu_seconds_total"
    public static let startTimeSeconds = "process_start_time_seconds"

    /// Registers the four families and a collector that refreshes them from
    /// `sampler` (default: /proc). Returns false, registering nothing, when
    /// the sampler has nothing to report (no /proc): a start time of 0 would
    /// mislead. A sample that fails later leaves the last values in place.
    @discardableResult
    public static func register(
        in registry: MetricsRegistry,
        sampler: @escaping @Sendable () -> ProcessSample? = ProcessSample.current
    ) throws(MetricsRegistrationError) -> Bool {
        guard let first = sampler() else { return false }
        let memory = try registry.makeGauge(name: residentMemoryBytes, help: "Resident memory size in bytes.")
        let descriptors = try registry.makeGauge(name: openFileDescriptors, help: "Number of open file descriptors.")
        let cpu = try registry.makeCounter(
            name: cpuSecondsTotal, help: "Total user and system CPU time spent in seconds.")
        let start = try registry.makeGauge(
            name: startTimeSeconds, help: "Start time of the process since unix epoch in seconds.")
        let apply: @Sendable (ProcessSample) -> Void = { sample in
            memory.set(sample.residentMemoryBytes)
            descriptors.set(sample.openFileDescriptors)
            cpu.labels().setTotal(sample.cpuSeconds)
            start.set(sample.startTimeSeconds)
        }
        apply(first)
        try registry.addCollector {
            if let sample = sampler() { apply(sample) }
        }
        return true
    }
}
