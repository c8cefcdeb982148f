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
    /// The longest run of non-starters (combining marks) a string may hold:
    /// Unicode's Stream-Safe Text Format (UAX #15, section 13). Swift
    /// normalizes a String to hash or compare it (`Set`, `Dictionary`, `==`)
    /// and sorts each run of combining marks with an insertion sort, so an
    /// unbounded run costs time quadratic in its length: a 64 KiB key of
    /// marks in descending order took ~5x10^8 steps to look up.
    public static let combiningMarksInARowMax = 30
}
