import Foundation

/// A bounded LRU of chains that verified (chain, OIDs, P-256 key), keyed by
/// the SHA-256 fingerprints of leaf and intermediate DER plus the root set.
/// A hit saves parsing and chain building; callers still check the effective
/// date against the cached window and verify the signature every time.
final class CertificateChainCache: @unchecked Sendable {
    /// Cache key: fingerprints of leaf, intermediate and the trusted root set.
    struct Key: Hashable, Sendable {
        let leafFingerprint: [UInt8]
        let intermediateFingerprint: [UInt8]
        let rootSetFingerprint: [UInt8]
    }

    /// A verified chain plus, in online mode, until when OCSP said "good".
    struct Entry: Sendable {
        var chain: VerifiedChain
        var ocspGoodUntilSeconds: Int64?
    }

    private let lock = NSLock()
    private var entries: [Key: (entry: Entry, lastUse: UInt64)] = [:]
    private var useCounter: UInt64 = 0
    let capacity: Int

    init(capacity: Int = VerificationLimits.chainCacheEntriesMax) {
        precondition(capacity > 0, "cache capacity must be positive")
        self.capacity = capacity
    }

    func lookup(_ key: Key) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        guard var slot = entries[key] else { return nil }
        useCounter += 1
        slot.lastUse = useCounter
        entries[key] = slot
        return slot.entry
    }

    func store(_ entry: Entry, for key: Key) {
        lock.lock()
        defer { lock.unlock() }
        useCounter += 1
        if entries[key] == nil, entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            entries.removeValue(forKey: oldest)
        }
        entries[key] = (entry, useCounter)
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
