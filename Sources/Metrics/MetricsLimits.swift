/// Every bound of the metrics module in one place (TIGER_STYLE: a named
/// maximum for everything). A scrape must stay small and cheap however the
/// services are driven, so each family holds a bounded number of series and
/// each series a bounded amount of text.
public enum MetricsLimits {
    /// Families one registry holds (the IAP families, process metrics and
    /// `metrics_label_overflow_total` fit many times over).
    public static let familiesMax = 256
    /// Label names one family declares. `LabelValues` stores this many values
    /// inline, so resolving a label set allocates nothing.
    public static let labelNamesMax = 4
    /// The label sets a family holds when it declares no other bound.
    public static let seriesPerFamilyDefault = 64
    /// The largest bound a family may declare.
    public static let seriesPerFamilyMax = 1_000
    /// A label value longer than this (UTF-8 bytes) is not stored: the
    /// observation goes to the `other` series, like one past the bound.
    public static let labelValueBytesMax = 128
    /// Metric and label names (UTF-8 bytes).
    public static let nameBytesMax = 128
    /// HELP text (UTF-8 bytes, before escaping).
    public static let helpBytesMax = 1_024
    /// Upper bounds one histogram declares (`+Inf` not counted).
    public static let bucketsMax = 32
    /// Collectors (render-time refreshers) one registry runs.
    public static let collectorsMax = 16
    /// The label value every label of the overflow series carries.
    public static let overflowLabelValue = "other"
}
