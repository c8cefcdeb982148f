import CryptoPrimitives
import Foundation
import Synchronization

/// Verifies and decodes App Store signed data (transactions, renewal info,
/// Server Notifications V2, app transactions), deciding as Apple's
/// SignedDataVerifier does: ES256 compact JWS, `x5c` leaf -> intermediate ->
/// a configured root at the effective date, Apple's marker OIDs, then the
/// payload's bundle id / environment / appAppleId.
///
/// Offline (`onlineChecks == false`) the effective date is the payload's
/// `signedDate` and the synchronous entry points are pure CPU work. Online,
/// leaf and intermediate are checked with OCSP and the effective date is now:
/// use the `async` entry points (network I/O goes through `OCSPFetcher`).
/// Verified chains are cached (bounded LRU) so a repeat costs one signature check.
public final class SignedDataVerifier: Sendable {
    /// Which payload `verifyAndDecodeJSON` should expect.
    public enum PayloadKind: String, Sendable, CaseIterable {
        case transaction
        case renewalInfo
        case notification
        case appTransaction
    }

    public let configuration: VerifierConfiguration
    private let claims: ClaimsPolicy
    private let trustStore: TrustStore
    private let cache: CertificateChainCache
    private let revocation: OCSPRevocationChecker
    private let nowSeconds: @Sendable () -> Int64
    /// Chain-cache lookups that found the chain / had to build it.
    private let chainCacheHits = Atomic<UInt64>(0)
    private let chainCacheMisses = Atomic<UInt64>(0)

    /// Creates a verifier; with `onlineChecks` it uses `HTTPOCSPFetcher`.
    public convenience init(configuration: VerifierConfiguration) throws(ConfigurationError) {
        try self.init(
            configuration: configuration,
            ocspFetcher: configuration.onlineChecks ? HTTPOCSPFetcher() : nil)
    }

    /// Creates a verifier with an explicit OCSP fetcher and clock (tests).
    public init(
        configuration: VerifierConfiguration,
        ocspFetcher: (any OCSPFetcher)?,
        nowSeconds: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
        cacheEntriesMax: Int = VerificationLimits.chainCacheEntriesMax
    ) throws(ConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.claims = ClaimsPolicy(configuration: configuration)
        self.trustStore = try TrustStore(rootsDER: configuration.trustedRoots)
        self.cache = CertificateChainCache(capacity: max(1, cacheEntriesMax))
        self.revocation = OCSPRevocationChecker(fetcher: ocspFetcher, cache: cache)
        self.nowSeconds = nowSeconds
    }

    /// Number of verified chains currently cached.
    public var cachedChainCount: Int { cache.count }

    /// Chain-cache lookups since start: `hits` skipped chain building,
    /// `misses` built and checked the chain (metrics read the totals).
    public var chainCacheLookups: (hits: UInt64, misses: UInt64) {
        (chainCacheHits.load(ordering: .relaxed), chainCacheMisses.load(ordering: .relaxed))
    }

    /// OCSP checks since start by outcome, and verifications accepted on
    /// answers held through a failed refresh (online checks; metrics read
    /// the totals).
    public var ocspCounts: OCSPCheckCounts { revocation.checkCounts }

    // MARK: Synchronous (offline) entry points.

    /// Verifies a signed transaction (`signedTransactionInfo`, StoreKit 2 `jwsRepresentation`).
    public func verifyTransaction(_ jws: String) throws(VerificationFailure) -> JWSTransaction {
        try transaction(from: verifyOffline(jws))
    }

    /// Verifies a signed renewal info (`signedRenewalInfo`).
    public func verifyRenewalInfo(_ jws: String) throws(VerificationFailure) -> JWSRenewalInfo {
        try renewalInfo(from: verifyOffline(jws))
    }

    /// Verifies an App Store Server Notification V2 `signedPayload`.
    public func verifyNotification(_ jws: String) throws(VerificationFailure) -> NotificationPayload {
        try notification(from: verifyOffline(jws))
    }

    /// Verifies a signed AppTransaction.
    public func verifyAppTransaction(_ jws: String) throws(VerificationFailure) -> AppTransaction {
        try appTransaction(from: verifyOffline(jws))
    }

    /// Verifies as `kind` and returns the payload's JSON text (for the CLI).
    public func verifyAndDecodeJSON(_ jws: String, kind: PayloadKind) throws(VerificationFailure) -> String {
        try payloadJSON(from: verifyOffline(jws), kind: kind)
    }

    // MARK: Asynchronous entry points (online checks when configured).

    public func verifyTransaction(_ jws: String) async throws(VerificationFailure) -> JWSTransaction {
        try transaction(from: await verifyOnline(jws))
    }

    public func verifyRenewalInfo(_ jws: String) async throws(VerificationFailure) -> JWSRenewalInfo {
        try renewalInfo(from: await verifyOnline(jws))
    }

    public func verifyNotification(_ jws: String) async throws(VerificationFailure) -> NotificationPayload {
        try notification(from: await verifyOnline(jws))
    }

    public func verifyAppTransaction(_ jws: String) async throws(VerificationFailure) -> AppTransaction {
        try appTransaction(from: await verifyOnline(jws))
    }

    public func verifyAndDecodeJSON(_ jws: String, kind: PayloadKind) async throws(VerificationFailure) -> String {
        try payloadJSON(from: await verifyOnline(jws), kind: kind)
    }

    // MARK: Payload decoding and claims.

    private func transaction(from token: VerifiedToken) throws(VerificationFailure) -> JWSTransaction {
        let decoded = try JWSTransaction(reader: token.reader, payloadJSON: token.token.payloadText)
        try claims.check(
            .bundleAndEnvironment, bundleId: decoded.bundleId, appAppleId: nil, environment: decoded.environment)
        return decoded
    }

    private func renewalInfo(from token: VerifiedToken) throws(VerificationFailure) -> JWSRenewalInfo {
        let decoded = try JWSRenewalInfo(reader: token.reader, payloadJSON: token.token.payloadText)
        try claims.check(.environmentOnly, bundleId: nil, appAppleId: nil, environment: decoded.environment)
        return decoded
    }

    private func notification(from token: VerifiedToken) throws(VerificationFailure) -> NotificationPayload {
        let decoded = try NotificationPayload(
            reader: token.reader, payloadJSON: token.token.payloadText)
        let identity = decoded.appIdentity
        try claims.check(
            .bundleAppAppleIdAndEnvironment, bundleId: identity.bundleId, appAppleId: identity.appAppleId,
            environment: identity.environment)
        return decoded
    }

    private func appTransaction(from token: VerifiedToken) throws(VerificationFailure) -> AppTransaction {
        let decoded = try AppTransaction(reader: token.reader, payloadJSON: token.token.payloadText)
        try claims.check(
            .bundleAppAppleIdAndEnvironment, bundleId: decoded.bundleId, appAppleId: decoded.appAppleId,
            environment: decoded.receiptType)
        return decoded
    }

    private func payloadJSON(from token: VerifiedToken, kind: PayloadKind) throws(VerificationFailure) -> String {
        switch kind {
        case .transaction: return try transaction(from: token).payloadJSON
        case .renewalInfo: return try renewalInfo(from: token).payloadJSON
        case .notification: return try notification(from: token).payloadJSON
        case .appTransaction: return try appTransaction(from: token).payloadJSON
        }
    }

    // MARK: Signature and chain.

    /// A token whose signature and chain verified, with its payload reader
    /// (built once and shared by the effective date and the decoder).
    private struct VerifiedToken {
        let token: CompactJWS
        let reader: PayloadReader
    }

    private func verifyOffline(_ jws: String) throws(VerificationFailure) -> VerifiedToken {
        guard !configuration.onlineChecks else { throw .onlineCheckRequired }
        let token = try CompactJWS.parse(jws)
        let reader = try PayloadReader(token.payload, context: "payload")
        let effectiveSeconds = try offlineEffectiveSeconds(reader)
        let (entry, _) = try chainEntry(for: token, atSeconds: effectiveSeconds)
        try checkSignature(token, key: entry.chain.leafKey)
        return VerifiedToken(token: token, reader: reader)
    }

    private func verifyOnline(_ jws: String) async throws(VerificationFailure) -> VerifiedToken {
        guard configuration.onlineChecks else { return try verifyOffline(jws) }
        let token = try CompactJWS.parse(jws)
        let now = nowSeconds()
        let (entry, key) = try chainEntry(for: token, atSeconds: now)
        var decision = entry.ocsp.decision(atSeconds: now)
        if decision == .ask {
            decision = await revocation.refreshedStanding(of: entry, key: key, atSeconds: now)
                .decisionWithoutAsking(atSeconds: now)
        }
        switch decision {
        case .accept(.current): break
        case .accept(.heldThroughOutage): revocation.countAcceptedThroughOutage()
        case .refuse(let failure): throw failure
        case .ask: throw .retryable(reason: "OCSP check did not settle")
        }
        try checkSignature(token, key: entry.chain.leafKey)
        return VerifiedToken(token: token, reader: try PayloadReader(token.payload, context: "payload"))
    }

    /// Offline effective date: `signedDate`, else `receiptCreationDate`
    /// (app transactions), else now, as Apple's library does.
    private func offlineEffectiveSeconds(_ reader: PayloadReader) throws(VerificationFailure) -> Int64 {
        if let signed = try reader.timestamp("signedDate") { return signed.secondsSince1970 }
        if let created = try reader.timestamp("receiptCreationDate") { return created.secondsSince1970 }
        return nowSeconds()
    }

    private func checkSignature(_ token: CompactJWS, key: ES256PublicKey) throws(VerificationFailure) {
        guard key.isValidSignature(token.signature, for: token.signingInput) else { throw .badSignature }
    }

    /// The verified chain for the token's `x5c`, from the cache or freshly
    /// verified, valid at `atSeconds`.
    private func chainEntry(for token: CompactJWS, atSeconds: Int64)
        throws(VerificationFailure) -> (CertificateChainCache.Entry, CertificateChainCache.Key)
    {
        let chain = token.certificateChainBase64
        let text = CertificateChainCache.TextKey(leafBase64: chain[0], intermediateBase64: chain[1])
        if let (cached, key) = cache.lookup(text: text) {
            chainCacheHits.add(1, ordering: .relaxed)
            guard cached.chain.isValid(atSeconds: atSeconds) else { throw .expired }
            return (cached, key)
        }
        guard let leafDER = try? StrictBase64.decodeStandard(chain[0].utf8),
            let intermediateDER = try? StrictBase64.decodeStandard(chain[1].utf8)
        else { throw .badCertificate(reason: "x5c entry is not standard base64") }
        let key = CertificateChainCache.Key(
            leafFingerprint: SHA256.hash(leafDER),
            intermediateFingerprint: SHA256.hash(intermediateDER),
            rootSetFingerprint: trustStore.rootSetFingerprint)
        if let cached = cache.lookup(key) {
            chainCacheHits.add(1, ordering: .relaxed)
            guard cached.chain.isValid(atSeconds: atSeconds) else { throw .expired }
            cache.remember(text: text, for: key)
            return (cached, key)
        }
        chainCacheMisses.add(1, ordering: .relaxed)
        guard let leaf = X509Certificate(der: leafDER) else { throw .badCertificate(reason: "leaf is not DER") }
        guard let intermediate = X509Certificate(der: intermediateDER) else {
            throw .badCertificate(reason: "intermediate is not DER")
        }
        let verified = try trustStore.verify(leaf: leaf, intermediate: intermediate, atSeconds: atSeconds)
        let entry = CertificateChainCache.Entry(chain: verified)
        cache.store(entry, for: key, text: text)
        return (entry, key)
    }
}
