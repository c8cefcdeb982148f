import Locking

/// One family's series by label values, bounded: at most `seriesMax` label
/// sets are admitted; past that, and for a value longer than
/// `MetricsLimits.labelValueBytesMax`, the observation goes to the overflow
/// series (every label `other`), which the bound does not count, and the
/// caller is told so it can count it in `metrics_label_overflow_total`.
final class SeriesTable<Series: AnyObject & Sendable>: Sendable {
    private struct State {
        var series: [LabelValues: Series] = [:]
        /// Label sets admitted under the bound (the overflow series excluded).
        var admittedCount = 0
    }

    let labelCount: Int
    let seriesMax: Int
    private let makeSeries: @Sendable () -> Series
    private let state = Mutex(State())

    init(labelCount: Int, seriesMax: Int, makeSeries: @escaping @Sendable () -> Series) {
        precondition(labelCount >= 0 && labelCount <= MetricsLimits.labelNamesMax)
        precondition(seriesMax >= 1 && seriesMax <= MetricsLimits.seriesPerFamilyMax)
        self.labelCount = labelCount
        self.seriesMax = seriesMax
        self.makeSeries = makeSeries
    }

    /// The series of `values`, created at zero when new and within the
    /// bound; `overflowed` is true when the overflow series answered.
    func series(for values: LabelValues) -> (series: Series, overflowed: Bool) {
        assert(values.count == labelCount)
        return state.withLock { state in
            if let found = state.series[values] { return (found, false) }
            if state.admittedCount < seriesMax && values.isWithinLimits {
                let created = makeSeries()
                state.series[values] = created
                state.admittedCount += 1
                return (created, false)
            }
            let overflowKey = LabelValues.overflow(count: labelCount)
            if let overflow = state.series[overflowKey] { return (overflow, true) }
            let overflow = makeSeries()
            state.series[overflowKey] = overflow
            assert(state.series.count <= seriesMax + 1)
            return (overflow, true)
        }
    }

    /// Every series, ordered by label values (the exposition's order).
    func snapshot() -> [(values: LabelValues, series: Series)] {
        let entries = state.withLock { state in state.series.map { (values: $0.key, series: $0.value) } }
        return entries.sorted { $0.values < $1.values }
    }
}
