/// Pure parsers of the /proc files `ProcessSample` reads (proc(5)), so the
/// field arithmetic is tested on fixed text.
enum ProcStatParser {
    /// The fields of /proc/self/stat this module uses.
    struct SelfStat: Equatable {
        /// utime + stime, in clock ticks (fields 14 and 15).
        var cpuTicks: UInt64
        /// When the process started, in clock ticks after boot (field 22).
        var startTicks: UInt64
        /// Resident set size in pages (field 24).
        var residentPages: UInt64
    }

    /// Parses /proc/self/stat. The command name (field 2) is in parentheses
    /// and may itself hold spaces and parentheses, so fields are counted
    /// from the last `)`.
    static func selfStat(_ text: String) -> SelfStat? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // After ")": field 3 (state) is index 0, so field n is index n - 3.
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> UInt64? {
            let index = number - 3
            return index < fields.count ? UInt64(fields[index].trimmingWhitespace) : nil
        }
        guard let utime = field(14), let stime = field(15), let start = field(22), let rss = field(24) else {
            return nil
        }
        return SelfStat(cpuTicks: utime + stime, startTicks: start, residentPages: rss)
    }

    /// The boot time in seconds since the epoch: the `btime` line of /proc/stat.
    static func bootTimeSeconds(_ text: String) -> UInt64? {
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return UInt64(line.dropFirst("btime ".count).trimmingWhitespace)
        }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingWhitespace: Substring {
        var trimmed = self
        while let last = trimmed.last, last.isWhitespace { trimmed = trimmed.dropLast() }
        while let first = trimmed.first, first.isWhitespace { trimmed = trimmed.dropFirst() }
        return trimmed
    }
}
