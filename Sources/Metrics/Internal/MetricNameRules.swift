/// Prometheus's naming rules, checked byte by byte (ASCII only, so no
/// Unicode look-alikes slip through).
enum MetricNameRules {
    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`, at most `MetricsLimits.nameBytesMax`
    /// bytes, not starting with `__` (reserved for Prometheus's own use).
    static func isValidMetricName(_ name: String) -> Bool {
        isValid(name, allowsColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, at most `MetricsLimits.nameBytesMax` bytes,
    /// not starting with `__`.
    static func isValidLabelName(_ name: String) -> Bool {
        isValid(name, allowsColon: false)
    }

    /// Label names the exposition format gives a meaning of its own: `le`
    /// (a histogram's bucket bound) and `quantile` (a summary's).
    static let reservedLabelNames: Set<String> = ["le", "quantile"]

    private static func isValid(_ name: String, allowsColon: Bool) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= MetricsLimits.nameBytesMax, !name.hasPrefix("__") else { return false }
        for (index, byte) in bytes.enumerated() {
            let isLetter =
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            let isAllowed =
                isLetter || byte == UInt8(ascii: "_") || (allowsColon && byte == UInt8(ascii: ":"))
                || (isDigit && index > 0)
            if !isAllowed { return false }
        }
        return true
    }
}
