/// One family's label values, stored inline (up to
/// `MetricsLimits.labelNamesMax`): building one and looking it up in the
/// family's table allocates nothing, so an increment of a label set already
/// seen costs a hash, a lock and an atomic add.
struct LabelValues: Hashable, Sendable, Comparable {
    let count: Int
    private let value0: String
    private let value1: String
    private let value2: String
    private let value3: String

    init(count: Int, _ value0: String = "", _ value1: String = "", _ value2: String = "", _ value3: String = "") {
        assert(count >= 0 && count <= MetricsLimits.labelNamesMax)
        assert(MetricsLimits.labelNamesMax == 4, "LabelValues stores exactly labelNamesMax values")
        self.count = count
        self.value0 = value0
        self.value1 = value1
        self.value2 = value2
        self.value3 = value3
    }

    init(_ values: [String]) {
        precondition(values.count <= MetricsLimits.labelNamesMax)
        func at(_ index: Int) -> String { index < values.count ? values[index] : "" }
        self.init(count: values.count, at(0), at(1), at(2), at(3))
    }

    /// Every label set to `MetricsLimits.overflowLabelValue`.
    static func overflow(count: Int) -> LabelValues {
        let other = MetricsLimits.overflowLabelValue
        return LabelValues(
            count: count, count > 0 ? other : "", count > 1 ? other : "", count > 2 ? other : "", count > 3 ? other : ""
        )
    }

    subscript(index: Int) -> String {
        precondition(index >= 0 && index < count)
        switch index {
        case 0: return value0
        case 1: return value1
        case 2: return value2
        default: return value3
        }
    }

    /// True when every value fits `MetricsLimits.labelValueBytesMax`.
    var isWithinLimits: Bool {
        (0..<count).allSatisfy { self[$0].utf8.count <= MetricsLimits.labelValueBytesMax }
    }

    /// Orders by the first value that differs (the exposition's series order).
    static func < (lhs: LabelValues, rhs: LabelValues) -> Bool {
        for index in 0..<min(lhs.count, rhs.count) where lhs[index] != rhs[index] {
            return lhs[index] < rhs[index]
        }
        return lhs.count < rhs.count
    }
}
