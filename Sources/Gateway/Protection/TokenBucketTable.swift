/// A token bucket per client key, in a table of bounded size: the
/// per-address rate limit of the unauthenticated notification route. Pure:
/// the clock is an argument (monotonic milliseconds), so tests drive time.
///
/// Each bucket holds at most `burst` tokens and refills at
/// `ratePerSecond`; a request takes one token or is refused with the
/// whole seconds until one is there. Arithmetic is in thousandths of a
/// token, integers only. A key not in the table has a full bucket, so a
/// bucket that has refilled is indistinguishable from an absent one: when
/// the table is full, those go first; if fewer than an eighth of the slots
/// come free that way, the least recently seen keys go too (an attacker
/// with more addresses than slots can at worst reset its own buckets, and
/// the sweep costs O(n log n) once per n/8 new keys).
public struct TokenBucketTable: Sendable {
    /// The limit's settings.
    public struct Rule: Sendable, Equatable {
        /// Tokens added per second.
        public let ratePerSecond: Int64
        /// The most tokens a bucket holds: requests allowed at once.
        public let burst: Int64

        public init(ratePerSecond: Int64, burst: Int64) {
            precondition(ratePerSecond > 0 && burst > 0, "a rate limit needs a positive rate and burst")
            self.ratePerSecond = ratePerSecond
            self.burst = burst
        }
    }

    /// The verdict on one request.
    public enum Decision: Sendable, Equatable {
        case allowed
        /// Refused: a token will be there in this many whole seconds (at least 1).
        case refused(retryAfterSeconds: Int64)
    }

    private struct Bucket: Sendable {
        /// Thousandths of a token.
        var milliTokens: Int64
        /// When `milliTokens` was last brought up to date.
        var updatedAtMilliseconds: Int64
    }

    private static let milliTokensPerToken: Int64 = 1000

    public let rule: Rule
    /// The most keys kept at once.
    public let keysMax: Int
    private var buckets: [String: Bucket] = [:]

    public init(rule: Rule, keysMax: Int) {
        precondition(keysMax >= 8, "the table keeps at least 8 keys")
        self.rule = rule
        self.keysMax = keysMax
    }

    /// Keys held right now (at most `keysMax`).
    public var keyCount: Int { buckets.count }

    /// Takes one token from `key`'s bucket, or says how long to wait.
    public mutating func take(_ key: String, nowMilliseconds: Int64) -> Decision {
        let full = rule.burst * Self.milliTokensPerToken
        var bucket: Bucket
        if let existing = buckets[key] {
            bucket = existing
            let elapsed = max(0, nowMilliseconds - bucket.updatedAtMilliseconds)
            // Thousandths per millisecond equal tokens per second; clamp before multiplying.
            let refill = min(elapsed, full) * rule.ratePerSecond
            bucket.milliTokens = min(full, bucket.milliTokens + refill)
            bucket.updatedAtMilliseconds = nowMilliseconds
        } else {
            if buckets.count >= keysMax { evict(nowMilliseconds: nowMilliseconds) }
            bucket = Bucket(milliTokens: full, updatedAtMilliseconds: nowMilliseconds)
        }
        guard bucket.milliTokens >= Self.milliTokensPerToken else {
            buckets[key] = bucket
            let missing = Self.milliTokensPerToken - bucket.milliTokens
            let waitMilliseconds = (missing + rule.ratePerSecond - 1) / rule.ratePerSecond
            return .refused(retryAfterSeconds: max(1, (waitMilliseconds + 999) / 1000))
        }
        bucket.milliTokens -= Self.milliTokensPerToken
        buckets[key] = bucket
        assert(buckets.count <= keysMax)
        return .allowed
    }

    /// Makes room for at least one key: drops refilled buckets, then the
    /// least recently seen until an eighth of the table is free.
    private mutating func evict(nowMilliseconds: Int64) {
        let full = rule.burst * Self.milliTokensPerToken
        let rule = self.rule
        buckets = buckets.filter { _, bucket in
            let elapsed = max(0, nowMilliseconds - bucket.updatedAtMilliseconds)
            return bucket.milliTokens + min(elapsed, full) * rule.ratePerSecond < full
        }
        let target = keysMax - max(1, keysMax / 8)
        guard buckets.count > target else { return }
        let oldestFirst = buckets.sorted { $0.value.updatedAtMilliseconds < $1.value.updatedAtMilliseconds }
        for (key, _) in oldestFirst.prefix(buckets.count - target) { buckets[key] = nil }
    }
}
