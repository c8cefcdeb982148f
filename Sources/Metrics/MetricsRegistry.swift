import Locking

/// Owns a process's metric families and renders them in the Prometheus
/// text exposition format 0.0.4. Families are registered once at start-up
/// (a name that breaks Prometheus's rules or is taken is refused with a
/// `MetricsRegistrationError`) and updated from any thread or task.
///
/// Rendering runs the collectors first (render-time refreshers such as
/// `ProcessMetrics`), then writes every family ordered by name, and each
/// family's series ordered by label values, so equal state renders equal text.
public final class MetricsRegistry: Sendable {
    private struct State {
        var families: [String: any RenderableFamily] = [:]
        /// Every sample name a family renders (a histogram's `_bucket`,
        /// `_sum`, `_count` too), so no two families can write the same line.
        var sampleNames: Set<String> = []
        var collectors: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let overflowCounter: OverflowCounter

    public init() {
        let family = Counter(
            name: OverflowCounter.name, help: OverflowCounter.help, kind: .counter, labelNames: ["metric"],
            seriesMax: MetricsLimits.familiesMax, overflowCounter: nil, makeSeries: { CounterSeries() },
            renderSeries: Self.renderCounter)
        overflowCounter = OverflowCounter(family: family)
        state.withLock { state in
            state.families[family.name] = family
            state.sampleNames.insert(family.name)
        }
    }

    /// Registers a counter. Its name must end in `_total`.
    public func makeCounter(
        name: String, help: String, labelNames: [String] = [],
        seriesMax: Int = MetricsLimits.seriesPerFamilyDefault
    ) throws(MetricsRegistrationError) -> Counter {
        try check(name: name, kind: .counter, help: help, labelNames: labelNames, seriesMax: seriesMax)
        let family = Counter(
            name: name, help: help, kind: .counter, labelNames: labelNames, seriesMax: seriesMax,
            overflowCounter: overflowCounter, makeSeries: { CounterSeries() }, renderSeries: Self.renderCounter)
        try add(family, sampleNames: [name])
        return family
    }

    /// Registers a gauge. Its name must not end in `_total`.
    public func makeGauge(
        name: String, help: String, labelNames: [String] = [],
        seriesMax: Int = MetricsLimits.seriesPerFamilyDefault
    ) throws(MetricsRegistrationError) -> Gauge {
        try check(name: name, kind: .gauge, help: help, labelNames: labelNames, seriesMax: seriesMax)
        let family = Gauge(
            name: name, help: help, kind: .gauge, labelNames: labelNames, seriesMax: seriesMax,
            overflowCounter: overflowCounter, makeSeries: { GaugeSeries() }
        ) { series, values, family, writer in
            writer.sample(
                name: family.name, labelNames: family.labelNames, values: values,
                value: ExpositionWriter.format(series.value))
        }
        try add(family, sampleNames: [name])
        return family
    }

    /// Registers a histogram with `buckets` (default: request latency in
    /// seconds). It renders `name_bucket{le=...}` (cumulative, `+Inf` last),
    /// `name_sum` and `name_count`.
    public func makeHistogram(
        name: String, help: String, labelNames: [String] = [],
        buckets: HistogramBuckets = .defaultLatencySeconds,
        seriesMax: Int = MetricsLimits.seriesPerFamilyDefault
    ) throws(MetricsRegistrationError) -> Histogram {
        try check(name: name, kind: .histogram, help: help, labelNames: labelNames, seriesMax: seriesMax)
        if let problem = buckets.problem {
            throw MetricsRegistrationError(.invalidBuckets, metricName: name, detail: problem)
        }
        let upperBounds = buckets.upperBounds
        let boundLabels = upperBounds.map(ExpositionWriter.format) + ["+Inf"]
        let family = Histogram(
            name: name, help: help, kind: .histogram, labelNames: labelNames, seriesMax: seriesMax,
            overflowCounter: overflowCounter, makeSeries: { HistogramSeries(upperBounds: upperBounds) }
        ) { series, values, family, writer in
            let counts = series.snapshot()
            var cumulative: UInt64 = 0
            for (index, bound) in boundLabels.enumerated() {
                cumulative &+= counts.buckets[index]
                writer.sample(
                    name: family.name, suffix: "_bucket", labelNames: family.labelNames, values: values,
                    extra: ("le", bound), value: String(cumulative))
            }
            assert(cumulative == counts.count)
            writer.sample(
                name: family.name, suffix: "_sum", labelNames: family.labelNames, values: values,
                value: ExpositionWriter.format(counts.sum))
            writer.sample(
                name: family.name, suffix: "_count", labelNames: family.labelNames, values: values,
                value: String(counts.count))
        }
        try add(family, sampleNames: [name, name + "_bucket", name + "_sum", name + "_count"])
        return family
    }

    /// Adds a refresher run at the start of every `render()`, outside the
    /// registry's lock (it may update this registry's families). Keep it
    /// quick: it runs on the scraping request's task.
    public func addCollector(_ collect: @escaping @Sendable () -> Void) throws(MetricsRegistrationError) {
        try state.withLock { (state) throws(MetricsRegistrationError) in
            guard state.collectors.count < MetricsLimits.collectorsMax else {
                throw MetricsRegistrationError(
                    .registryFull, metricName: "", detail: "at most \(MetricsLimits.collectorsMax) collectors")
            }
            state.collectors.append(collect)
        }
    }

    /// The registered family names, sorted.
    public var familyNames: [String] {
        state.withLock { $0.families.keys.sorted() }
    }

    /// The exposition of every family (text format 0.0.4, UTF-8).
    public func render() -> String {
        let collectors = state.withLock { $0.collectors }
        for collect in collectors { collect() }
        let families = state.withLock { state in state.families.values.sorted { $0.name < $1.name } }
        var writer = ExpositionWriter()
        for family in families { family.render(into: &writer) }
        return writer.text
    }

    // MARK: - Registration checks

    private func check(name: String, kind: MetricKind, help: String, labelNames: [String], seriesMax: Int)
        throws(MetricsRegistrationError)
    {
        func refuse(_ code: MetricsRegistrationError.Code, _ detail: String) -> MetricsRegistrationError {
            MetricsRegistrationError(code, metricName: name, detail: detail)
        }
        guard MetricNameRules.isValidMetricName(name) else {
            throw refuse(
                .invalidMetricName,
                "a metric name matches [a-zA-Z_:][a-zA-Z0-9_:]*, does not start with __ and has at most \(MetricsLimits.nameBytesMax) bytes"
            )
        }
        if kind == .counter && !name.hasSuffix("_total") {
            throw refuse(.invalidMetricName, "a counter's name ends in _total")
        }
        if kind != .counter && name.hasSuffix("_total") {
            throw refuse(.invalidMetricName, "only a counter's name ends in _total")
        }
        let helpBytes = help.utf8.count
        guard helpBytes > 0 && helpBytes <= MetricsLimits.helpBytesMax else {
            throw refuse(.invalidHelp, "HELP text must have 1 to \(MetricsLimits.helpBytesMax) bytes, has \(helpBytes)")
        }
        guard labelNames.count <= MetricsLimits.labelNamesMax else {
            throw refuse(.tooManyLabelNames, "\(labelNames.count) label names, at most \(MetricsLimits.labelNamesMax)")
        }
        for labelName in labelNames {
            guard MetricNameRules.isValidLabelName(labelName) else {
                throw refuse(
                    .invalidLabelName,
                    "label name \"\(labelName)\" must match [a-zA-Z_][a-zA-Z0-9_]*, not start with __ and have at most \(MetricsLimits.nameBytesMax) bytes"
                )
            }
            guard !MetricNameRules.reservedLabelNames.contains(labelName) else {
                throw refuse(.invalidLabelName, "label name \"\(labelName)\" is reserved by the exposition format")
            }
        }
        guard Set(labelNames).count == labelNames.count else {
            throw refuse(.duplicateLabelName, "label names \(labelNames) repeat")
        }
        guard seriesMax >= 1 && seriesMax <= MetricsLimits.seriesPerFamilyMax else {
            throw refuse(.invalidSeriesMax, "seriesMax \(seriesMax) is outside 1...\(MetricsLimits.seriesPerFamilyMax)")
        }
    }

    private func add(_ family: any RenderableFamily, sampleNames: [String]) throws(MetricsRegistrationError) {
        try state.withLock { (state) throws(MetricsRegistrationError) in
            guard state.families.count < MetricsLimits.familiesMax else {
                throw MetricsRegistrationError(
                    .registryFull, metricName: family.name, detail: "at most \(MetricsLimits.familiesMax) families")
            }
            if let taken = sampleNames.first(where: state.sampleNames.contains) {
                throw MetricsRegistrationError(
                    .duplicateMetricName, metricName: family.name,
                    detail: "\(taken) is already rendered by another family")
            }
            state.families[family.name] = family
            state.sampleNames.formUnion(sampleNames)
        }
    }

    private static let renderCounter: @Sendable (CounterSeries, LabelValues, Counter, inout ExpositionWriter) -> Void =
        { series, values, family, writer in
            writer.sample(
                name: family.name, labelNames: family.labelNames, values: values,
                value: ExpositionWriter.format(series.value))
        }
}
