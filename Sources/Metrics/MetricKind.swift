/// The metric types this module renders, spelled as the TYPE line spells them.
public enum MetricKind: String, Sendable {
    case counter
    case gauge
    case histogram
}
