/// Why a family could not be registered: a programming or configuration
/// mistake found at start-up, never at observation time. A struct with a
/// nested `Code` of `static let`s (so codes can grow), the metric's name and
/// our own words on what is wrong.
public struct MetricsRegistrationError: Error, Equatable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Not `[a-zA-Z_:][a-zA-Z0-9_:]*`, starts with `__`, too long, or a
        /// suffix that does not fit the type (a counter must end in `_total`,
        /// nothing else may).
        public static let invalidMetricName = Code(rawValue: "invalid_metric_name")
        /// Not `[a-zA-Z_][a-zA-Z0-9_]*`, starts with `__` (reserved for
        /// Prometheus), too long, or `le`/`quantile` (reserved for histograms
        /// and summaries).
        public static let invalidLabelName = Code(rawValue: "invalid_label_name")
        /// The same label name twice in one family.
        public static let duplicateLabelName = Code(rawValue: "duplicate_label_name")
        /// More than `MetricsLimits.labelNamesMax` label names.
        public static let tooManyLabelNames = Code(rawValue: "too_many_label_names")
        /// The name (or one of the sample names it renders, such as a
        /// histogram's `_bucket`) is already taken in this registry.
        public static let duplicateMetricName = Code(rawValue: "duplicate_metric_name")
        /// Empty HELP text, or longer than `MetricsLimits.helpBytesMax`.
        public static let invalidHelp = Code(rawValue: "invalid_help")
        /// Histogram bounds empty, not finite, not strictly increasing, or
        /// more than `MetricsLimits.bucketsMax`.
        public static let invalidBuckets = Code(rawValue: "invalid_buckets")
        /// A series bound outside 1...`MetricsLimits.seriesPerFamilyMax`.
        public static let invalidSeriesMax = Code(rawValue: "invalid_series_max")
        /// The registry already holds `MetricsLimits.familiesMax` families
        /// (or `collectorsMax` collectors).
        public static let registryFull = Code(rawValue: "registry_full")

        public var description: String { rawValue }
    }

    public var code: Code
    /// The metric the registration was for.
    public var metricName: String
    public var detail: String

    public init(_ code: Code, metricName: String, detail: String) {
        self.code = code
        self.metricName = metricName
        self.detail = detail
    }

    public var description: String { "metric \(metricName): \(code): \(detail)" }
}
