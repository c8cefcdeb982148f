/// The parser's default limits, in one place. Callers with their own budgets
/// (a request body, a bearer token, a JWS) pass them explicitly.
public enum StrictJSONLimits {
    /// Default largest document accepted, in bytes.
    public static let documentBytesMaxDefault = 64 * 1024
    /// Default deepest nesting of arrays and objects accepted.
    public static let depthMaxDefault = 32
    /// Objects with fewer members check duplicate keys by scanning their
    /// keys; larger ones switch to a hash set so checks stay linear overall.
    public static let linearKeyScanMembersMax = 32
}
