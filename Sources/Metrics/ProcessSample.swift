import Foundation

/// What the process metrics report, read from /proc on Linux.
public struct ProcessSample: Sendable, Equatable {
    /// Resident set size in bytes.
    public var residentMemoryBytes: Double
    /// Open file descriptors (the listing of /proc/self/fd; it counts the
    /// descriptor of the listing itself, as Prometheus's Go client does).
    public var openFileDescriptors: Double
    /// User plus system CPU time in seconds.
    public var cpuSeconds: Double
    /// When the process started, in seconds since the epoch.
    public var startTimeSeconds: Double

    public init(residentMemoryBytes: Double, openFileDescriptors: Double, cpuSeconds: Double, startTimeSeconds: Double)
    {
        self.residentMemoryBytes = residentMemoryBytes
        self.openFileDescriptors = openFileDescriptors
        self.cpuSeconds = cpuSeconds
        self.startTimeSeconds = startTimeSeconds
    }

    /// This process now, or nil where /proc cannot be read (not Linux).
    /// Reads three small kernel-generated files: no disk I/O, so it may run
    /// on the scraping request's task.
    public static func current() -> ProcessSample? {
        #if os(Linux)
        guard let statData = FileManager.default.contents(atPath: "/proc/self/stat"),
            let selfStat = ProcStatParser.selfStat(String(decoding: statData, as: UTF8.self)),
            let procStatData = FileManager.default.contents(atPath: "/proc/stat"),
            let bootTime = ProcStatParser.bootTimeSeconds(String(decoding: procStatData, as: UTF8.self)),
            let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return nil }
        let clockTicksPerSecond = sysconf(Int32(_SC_CLK_TCK))
        let pageSizeBytes = sysconf(Int32(_SC_PAGESIZE))
        guard clockTicksPerSecond > 0, pageSizeBytes > 0 else { return nil }
        return ProcessSample(
            selfStat, bootTimeSeconds: bootTime, openFileDescriptors: descriptors.count,
            clockTicksPerSecond: Int(clockTicksPerSecond), pageSizeBytes: Int(pageSizeBytes))
        #else
        return nil
        #endif
    }

    /// The arithmetic of `current()`, for tests on fixed /proc text.
    init(
        _ selfStat: ProcStatParser.SelfStat, bootTimeSeconds: UInt64, openFileDescriptors: Int,
        clockTicksPerSecond: Int, pageSizeBytes: Int
    ) {
        precondition(clockTicksPerSecond > 0 && pageSizeBytes > 0)
        let ticks = Double(clockTicksPerSecond)
        self.init(
            residentMemoryBytes: Double(selfStat.residentPages) * Double(pageSizeBytes),
            openFileDescriptors: Double(openFileDescriptors),
            cpuSeconds: Double(selfStat.cpuTicks) / ticks,
            startTimeSeconds: Double(bootTimeSeconds) + Double(selfStat.startTicks) / ticks)
    }
}
