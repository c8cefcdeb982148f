import Locking

/// Bearer tokens that already passed `JWTVerifier`, keyed by their exact
/// text, so an app reusing its access token (the common case: one token
/// for many requests) costs a lookup instead of a signature check and two
/// JSON parses per request. Only a token whose signature and every claim
/// passed is stored; the time claims are checked again on every hit, so a
/// cached token still expires on time. At most `entriesMax` tokens: a full
/// cache drops expired tokens first, then arbitrary ones down to three
/// quarters of `entriesMax`.
final class VerifiedTokenCache: Sendable {
    /// What a hit needs: the user, and the time claims to check again.
    struct Entry: Sendable {
        let user: AuthenticatedUser
        let expiry: Int64
        let notBefore: Int64?
        let issuedAt: Int64?
    }

    let entriesMax: Int
    private let entries = Mutex<[String: Entry]>([:])

    init(entriesMax: Int) {
        precondition(entriesMax > 0)
        self.entriesMax = entriesMax
    }

    var count: Int { entries.withLock { $0.count } }

    func entry(for token: String) -> Entry? {
        entries.withLock { $0[token] }
    }

    func store(_ entry: Entry, for token: String, nowSeconds: Int64) {
        entries.withLock { entries in
            if entries.count >= entriesMax && entries[token] == nil {
                entries = entries.filter { $0.value.expiry > nowSeconds }
                // Free a quarter at once, so this pass over every entry runs
                // once per entriesMax / 4 new tokens, not for each one.
                while entries.count > entriesMax * 3 / 4 { entries.remove(at: entries.startIndex) }
            }
            entries[token] = entry
        }
    }

    func remove(_ token: String) {
        _ = entries.withLock { $0.removeValue(forKey: token) }
    }
}
