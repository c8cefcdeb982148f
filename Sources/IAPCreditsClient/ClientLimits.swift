/// Every bound the client library keeps, in one place (TIGER_STYLE: a limit
/// on everything, names with the unit last).
public enum ClientLimits {
    /// The largest gateway answer read (the gateway's own bodies are far smaller).
    public static let responseBytesMax = 1_048_576
    /// The largest signed transaction kept or submitted (the gateway refuses more).
    public static let signedTransactionBytesMax = 65_536
    /// Durable records kept at once; a store refuses to grow past it.
    public static let pendingRecordsMax = 256
    /// Transactions submitted in one recovery pass; the rest wait for the next pass.
    public static let submissionsPerPassMax = 64
    /// Packages accepted from one packages answer.
    public static let packagesMax = 64
    /// A request's timeout when the configuration gives none.
    public static let requestTimeoutSecondsDefault: Double = 30
    /// How old a package list may be for a purchase of a regular package to
    /// trust it; an older one is read again before the payment sheet (the new
    /// user pack is always read again: another device may have bought it).
    public static let offersReuseSecondsMax = 300
    /// A record store's temporary file older than this is a save that was
    /// interrupted (the app died before its rename) and is deleted; a
    /// younger one may be another store's save on the same folder, in
    /// progress, and is left alone.
    public static let abandonedTemporaryFileAgeSecondsMin = 600
    /// Events buffered for an app that reads them slowly (the oldest are dropped).
    public static let eventsBufferedMax = 64
    /// The longest `Retry-After` honoured; a longer one (a misconfigured
    /// proxy) is read as this, so a purchase is still retried this launch.
    public static let retryAfterSecondsMax = 600
}
