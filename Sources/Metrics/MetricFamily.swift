import Synchronization

/// A metric family: one name, one HELP text, one type and a fixed list of
/// label names declared at registration; its series are created on first
/// use of a label set, at most `seriesMax` of them (see `MetricsLimits`).
///
/// `Counter`, `Gauge` and `Histogram` are this type with their series kind.
/// `labels(...)` takes exactly as many values as the family declares label
/// names (anything else is a programming error and stops the process, as in
/// Prometheus's own clients) and returns the series to update; keep it when
/// the label set is fixed. Calling `labels(...)` creates the series at zero,
/// which is how a service makes a series an alert watches exist before its
/// first event (`increase()` cannot see a series' first sample).
public final class MetricFamily<Series: AnyObject & Sendable>: Sendable {
    public let name: String
    public let help: String
    public let kind: MetricKind
    public let labelNames: [String]
    /// The label sets admitted before values go to the `other` series.
    public var seriesMax: Int { table.seriesMax }

    private let table: SeriesTable<Series>
    /// The only series of a family without labels, made at registration.
    private let unlabelled: Series?
    private let overflowCounter: OverflowCounter?
    private let renderSeries: @Sendable (Series, LabelValues, MetricFamily<Series>, inout ExpositionWriter) -> Void

    init(
        name: String, help: String, kind: MetricKind, labelNames: [String], seriesMax: Int,
        overflowCounter: OverflowCounter?, makeSeries: @escaping @Sendable () -> Series,
        renderSeries: @escaping @Sendable (Series, LabelValues, MetricFamily<Series>, inout ExpositionWriter) -> Void
    ) {
        self.name = name
        self.help = help
        self.kind = kind
        self.labelNames = labelNames
        self.table = SeriesTable(labelCount: labelNames.count, seriesMax: seriesMax, makeSeries: makeSeries)
        self.overflowCounter = overflowCounter
        self.renderSeries = renderSeries
        self.unlabelled = labelNames.isEmpty ? table.series(for: LabelValues(count: 0)).series : nil
    }

    /// The series of a family without labels.
    public func labels() -> Series {
        precondition(labelNames.isEmpty, "\(name) declares labels \(labelNames); pass their values")
        return unlabelled!
    }

    public func labels(_ value0: String) -> Series {
        resolve(LabelValues(count: 1, value0))
    }

    public func labels(_ value0: String, _ value1: String) -> Series {
        resolve(LabelValues(count: 2, value0, value1))
    }

    public func labels(_ value0: String, _ value1: String, _ value2: String) -> Series {
        resolve(LabelValues(count: 3, value0, value1, value2))
    }

    public func labels(_ value0: String, _ value1: String, _ value2: String, _ value3: String) -> Series {
        resolve(LabelValues(count: 4, value0, value1, value2, value3))
    }

    /// The series of `values` in label-name order (allocates the array; the
    /// fixed-arity overloads do not).
    public func labels(_ values: [String]) -> Series {
        precondition(
            values.count <= MetricsLimits.labelNamesMax,
            "\(name) declares \(labelNames.count) labels, got \(values.count) values")
        return values.isEmpty ? labels() : resolve(LabelValues(values))
    }

    private func resolve(_ values: LabelValues) -> Series {
        precondition(
            values.count == labelNames.count, "\(name) declares labels \(labelNames), got \(values.count) values")
        let (series, overflowed) = table.series(for: values)
        if overflowed { overflowCounter?.count(family: name) }
        return series
    }
}

extension MetricFamily: RenderableFamily {
    func render(into writer: inout ExpositionWriter) {
        writer.header(name: name, help: help, kind: kind)
        for entry in table.snapshot() {
            renderSeries(entry.series, entry.values, self, &writer)
        }
    }
}

/// What the registry keeps of each family: something that renders itself.
protocol RenderableFamily: AnyObject, Sendable {
    var name: String { get }
    func render(into writer: inout ExpositionWriter)
}

/// `metrics_label_overflow_total{metric}`: observations that went to a
/// family's `other` series. Its own label set is bounded by the number of
/// families, so it never overflows itself.
final class OverflowCounter: Sendable {
    static let name = "metrics_label_overflow_total"
    static let help =
        "Observations sent to a family's \"other\" series because the family reached its series bound or a label value was too long."

    let family: MetricFamily<CounterSeries>

    init(family: MetricFamily<CounterSeries>) {
        precondition(family.seriesMax >= MetricsLimits.familiesMax)
        self.family = family
    }

    func count(family name: String) {
        family.labels(name).increment()
    }
}

/// A family of `CounterSeries`: totals that only go up (names end in `_total`).
public typealias Counter = MetricFamily<CounterSeries>
/// A family of `GaugeSeries`: values that go up and down.
public typealias Gauge = MetricFamily<GaugeSeries>
/// A family of `HistogramSeries`: observations counted in cumulative buckets.
public typealias Histogram = MetricFamily<HistogramSeries>

extension MetricFamily where Series == CounterSeries {
    /// Increments a counter without labels.
    public func increment(by amount: Double = 1) { labels().increment(by: amount) }
}

extension MetricFamily where Series == GaugeSeries {
    /// Sets a gauge without labels.
    public func set(_ value: Double) { labels().set(value) }
    public func increment(by amount: Double = 1) { labels().increment(by: amount) }
    public func decrement(by amount: Double = 1) { labels().decrement(by: amount) }
}

extension MetricFamily where Series == HistogramSeries {
    /// Observes into a histogram without labels.
    public func observe(_ value: Double) { labels().observe(value) }
    public func observe(_ duration: Duration) { labels().observe(duration) }
}
