/// Everything a family is registered with, as a value: the system's
/// families are declared once as descriptors (`IAPMetricNames`) and
/// registered by the services' builders.
public struct MetricDescriptor: Sendable, Equatable {
    public let name: String
    /// The HELP text: what one unit of the metric means.
    public let help: String
    public let kind: MetricKind
    public let labelNames: [String]
    /// Label sets admitted before the `other` series.
    public let seriesMax: Int
    /// Histograms only.
    public let buckets: HistogramBuckets?

    public init(
        name: String, help: String, kind: MetricKind, labelNames: [String] = [],
        seriesMax: Int = MetricsLimits.seriesPerFamilyDefault, buckets: HistogramBuckets? = nil
    ) {
        precondition(
            (kind == .histogram) == (buckets != nil), "\(name): buckets are for histograms, and histograms need them")
        self.name = name
        self.help = help
        self.kind = kind
        self.labelNames = labelNames
        self.seriesMax = seriesMax
        self.buckets = buckets
    }
}

extension MetricsRegistry {
    /// Registers a counter descriptor.
    public func makeCounter(_ descriptor: MetricDescriptor) throws(MetricsRegistrationError) -> Counter {
        precondition(descriptor.kind == .counter, "\(descriptor.name) is a \(descriptor.kind)")
        return try makeCounter(
            name: descriptor.name, help: descriptor.help, labelNames: descriptor.labelNames,
            seriesMax: descriptor.seriesMax)
    }

    /// Registers a gauge descriptor.
    public func makeGauge(_ descriptor: MetricDescriptor) throws(MetricsRegistrationError) -> Gauge {
        precondition(descriptor.kind == .gauge, "\(descriptor.name) is a \(descriptor.kind)")
        return try makeGauge(
            name: descriptor.name, help: descriptor.help, labelNames: descriptor.labelNames,
            seriesMax: descriptor.seriesMax)
    }

    /// Registers a histogram descriptor.
    public func makeHistogram(_ descriptor: MetricDescriptor) throws(MetricsRegistrationError) -> Histogram {
        precondition(descriptor.kind == .histogram, "\(descriptor.name) is a \(descriptor.kind)")
        return try makeHistogram(
            name: descriptor.name, help: descriptor.help, labelNames: descriptor.labelNames,
            buckets: descriptor.buckets ?? .defaultLatencySeconds, seriesMax: descriptor.seriesMax)
    }
}
