import Foundation

/// A bounded LRU of chains that verified (chain, OIDs, P-256 key), keyed by
/// the SHA-256 fingerprints of leaf and intermediate DER plus the root set.
/// A hit saves parsing and chain building; callers still check the effective
/// date against the cached window and verify the signature every time.
///
/// Each entry also remembers the `x5c` text it was verified from, so a repeat
/// of the same text is found without decoding base64 or hashing DER again.
/// Strict base64 has exactly one accepted encoding per byte string, so equal
/// text means equal DER and the text lookup answers as the fingerprint one would.
final class CertificateChainCache: @unchecked Sendable {
    /// Cache key: fingerprints of leaf, intermediate and the trusted root set.
    struct Key: Hashable, Sendable {
        let leafFingerprint: [UInt8]
        let intermediateFingerprint: [UInt8]
        let rootSetFingerprint: [UInt8]
    }

    /// The `x5c` leaf and intermediate exactly as sent (standard base64).
    /// Equality compares the whole text; the hash reads only the lengths and
    /// the last bytes (the certificates' signatures), so it stays cheap.
    struct TextKey: Hashable, Sendable {
        let leafBase64: String
        let intermediateBase64: String

        /// Trailing UTF-8 bytes of each text fed to the hasher.
        static let hashedSuffixBytes = 32

        func hash(into hasher: inout Hasher) {
            for text in [leafBase64, intermediateBase64] {
                let utf8 = text.utf8
                hasher.combine(utf8.count)
                for byte in utf8.suffix(Self.hashedSuffixBytes) { hasher.combine(byte) }
            }
        }
    }

    /// A verified chain plus, in online mode, what OCSP said of it.
    struct Entry: Sendable {
        var chain: VerifiedChain
        var ocsp = OCSPStanding()
    }

    private struct Slot {
        var entry: Entry
        var lastUse: UInt64
        var text: TextKey?
    }

    private let lock = NSLock()
    private var entries: [Key: Slot] = [:]
    private var keysByText: [TextKey: Key] = [:]
    private var useCounter: UInt64 = 0
    let capacity: Int

    init(capacity: Int = VerificationLimits.chainCacheEntriesMax) {
        precondition(capacity > 0, "cache capacity must be positive")
        self.capacity = capacity
    }

    func lookup(_ key: Key) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return touch(key)
    }

    /// The entry verified from exactly this `x5c` text, with its key.
    func lookup(text: TextKey) -> (entry: Entry, key: Key)? {
        lock.lock()
        defer { lock.unlock() }
        guard let key = keysByText[text], let entry = touch(key) else { return nil }
        return (entry, key)
    }

    /// Stores `entry`; `text` (when given) lets `lookup(text:)` find it. A
    /// store without text keeps the text already recorded for `key`.
    func store(_ entry: Entry, for key: Key, text: TextKey? = nil) {
        lock.lock()
        defer { lock.unlock() }
        useCounter += 1
        if entries[key] == nil, entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })
        {
            entries.removeValue(forKey: oldest.key)
            if let oldText = oldest.value.text { keysByText.removeValue(forKey: oldText) }
        }
        let previous = entries[key]?.text
        let recorded = text ?? previous
        if let previous, previous != recorded { keysByText.removeValue(forKey: previous) }
        if let recorded { keysByText[recorded] = key }
        entries[key] = Slot(entry: entry, lastUse: useCounter, text: recorded)
    }

    /// Lets `lookup(text:)` find `key`'s entry by `text`, leaving the entry
    /// as it is (a concurrent store of a newer OCSP standing is kept).
    func remember(text: TextKey, for key: Key) {
        lock.lock()
        defer { lock.unlock() }
        guard entries[key] != nil else { return }
        if let previous = entries[key]?.text, previous != text { keysByText.removeValue(forKey: previous) }
        entries[key]?.text = text
        keysByText[text] = key
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// Marks `key` as just used; call with the lock held.
    private func touch(_ key: Key) -> Entry? {
        guard let index = entries.index(forKey: key) else { return nil }
        useCounter += 1
        entries.values[index].lastUse = useCounter
        return entries.values[index].entry
    }
}
