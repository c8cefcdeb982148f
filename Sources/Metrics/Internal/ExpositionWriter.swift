/// Writes the Prometheus text exposition format 0.0.4
/// (https://prometheus.io/docs/instrumenting/exposition_formats/): a HELP
/// and a TYPE line per family, then one line per sample,
/// `name{label="value",...} value`. The only place that knows the syntax.
struct ExpositionWriter {
    private(set) var text = ""

    init(capacityBytes: Int = 4_096) {
        text.reserveCapacity(capacityBytes)
    }

    /// `# HELP name text` (backslash and newline escaped) and `# TYPE name kind`.
    mutating func header(name: String, help: String, kind: MetricKind) {
        text += "# HELP "
        text += name
        text += " "
        Self.escape(help, quotes: false, into: &text)
        text += "\n# TYPE "
        text += name
        text += " "
        text += kind.rawValue
        text += "\n"
    }

    /// One sample line. `extra` is a last label the format adds itself (a
    /// histogram bucket's `le`).
    mutating func sample(
        name: String, suffix: String = "", labelNames: [String], values: LabelValues,
        extra: (name: String, value: String)? = nil, value: String
    ) {
        text += name
        text += suffix
        if !labelNames.isEmpty || extra != nil {
            text += "{"
            for index in labelNames.indices {
                if index > 0 { text += "," }
                text += labelNames[index]
                text += "=\""
                Self.escape(values[index], quotes: true, into: &text)
                text += "\""
            }
            if let extra {
                if !labelNames.isEmpty { text += "," }
                text += extra.name
                text += "=\""
                text += extra.value
                text += "\""
            }
            text += "}"
        }
        text += " "
        text += value
        text += "\n"
    }

    /// Escapes `\` and newline (and `"` in label values), as the format
    /// requires; every other character is written as is (UTF-8).
    static func escape(_ raw: String, quotes: Bool, into output: inout String) {
        guard
            raw.utf8.contains(where: {
                $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\n") || (quotes && $0 == UInt8(ascii: "\""))
            })
        else {
            output += raw
            return
        }
        for scalar in raw.unicodeScalars {
            switch scalar {
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\"" where quotes: output += "\\\""
            default: output.unicodeScalars.append(scalar)
            }
        }
    }

    /// A sample value as Prometheus parses it: `+Inf`, `-Inf`, `NaN`; a whole
    /// number below 2^63 in digits without a fraction (`42`, `1700000000`;
    /// exact, since such a double is an integer an `Int64` holds); anything
    /// else in Swift's shortest round-trip form (`0.005`, `1e-05`,
    /// `1.5e+20`), which Go's ParseFloat reads back exactly.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(.towardZero) && abs(value) < 9_223_372_036_854_775_808 {
            return String(Int64(value))
        }
        return "\(value)"
    }
}
