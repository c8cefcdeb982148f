import COpenSSL
import CryptoPrimitives
import Foundation

/// The configured trust anchors as an owned `X509_STORE`. Chains are built
/// from the leaf, the one intermediate from `x5c` and these roots only; the
/// root a JWS carries is never used. Verification uses a fresh
/// `X509_STORE_CTX` per call; the store itself is only read, which OpenSSL
/// supports concurrently, hence `@unchecked Sendable`.
final class TrustStore: @unchecked Sendable {
    private let store: OpaquePointer
    /// SHA-256 over the sorted root fingerprints: part of every cache key.
    let rootSetFingerprint: [UInt8]

    init(rootsDER: [Data]) throws(ConfigurationError) {
        guard let store = X509_STORE_new() else { throw .noTrustedRoots }
        self.store = store
        var fingerprints: [[UInt8]] = []
        for (index, der) in rootsDER.enumerated() {
            guard let root = X509Certificate(der: der) else {
                // A throwing init never runs deinit: free the store (and the
                // roots it took references to) here.
                X509_STORE_free(store)
                throw .invalidTrustedRoot(index: index)
            }
            let added = root.withPointer { X509_STORE_add_cert(store, $0) }
            // add_cert takes its own reference; a duplicate root is harmless.
            if added != 1 { ERR_clear_error() }
            fingerprints.append(SHA256.hash(der))
        }
        rootSetFingerprint = SHA256.hash(fingerprints.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
    }

    deinit { X509_STORE_free(store) }

    /// Verifies leaf -> intermediate -> trusted root at `atSeconds`.
    /// Missing authority key identifiers are tolerated (no X509_STRICT),
    /// as Apple's test PKI lacks them.
    func verify(leaf: X509Certificate, intermediate: X509Certificate, atSeconds: Int64)
        throws(VerificationFailure) -> VerifiedChain
    {
        // Declared first so it is freed last: the context points at the stack.
        guard let untrusted = CIAP_sk_X509_new_null() else { throw .badChain(reason: "out of memory") }
        defer { CIAP_sk_X509_free(untrusted) }
        // The stack borrows the intermediate; `intermediate` outlives this call.
        let chain = intermediate.withPointer { intermediatePointer in
            _ = CIAP_sk_X509_push(untrusted, intermediatePointer)
            return verifiedChain(leaf: leaf, untrusted: untrusted, atSeconds: atSeconds)
        }
        switch chain {
        case .failure(let failure) where failure.isValidityPeriod: throw .expired
        case .failure(let failure): throw .badChain(reason: failure.reason)
        case .success(let certificates):
            guard certificates.count == VerificationLimits.certificateChainLength else {
                throw .badChain(reason: "chain is not leaf, intermediate, root")
            }
            return try VerifiedChain.make(leaf: leaf, intermediate: intermediate, root: certificates[2]).get()
        }
    }

    /// Why `verifiedChain` found no chain: OpenSSL's verify error.
    struct ChainFailure: Error {
        let reason: String
        /// A certificate was expired or not yet valid at the instant checked.
        let isValidityPeriod: Bool
    }

    /// The chain OpenSSL builds from `leaf` through `untrusted` (borrowed;
    /// nil for none) to one of the trusted roots, valid at `atSeconds`,
    /// leaf first and the trusted root last.
    func verifiedChain(leaf: X509Certificate, untrusted: OpaquePointer?, atSeconds: Int64)
        -> Result<[X509Certificate], ChainFailure>
    {
        guard let context = X509_STORE_CTX_new() else {
            return .failure(ChainFailure(reason: "out of memory", isValidityPeriod: false))
        }
        defer { X509_STORE_CTX_free(context) }
        return leaf.withPointer { leafPointer in
            guard X509_STORE_CTX_init(context, store, leafPointer, untrusted) == 1 else {
                ERR_clear_error()
                return .failure(ChainFailure(reason: "context init failed", isValidityPeriod: false))
            }
            X509_STORE_CTX_set_time(context, 0, time_t(atSeconds))
            let verified = X509_verify_cert(context)
            ERR_clear_error()
            guard verified == 1 else {
                let code = X509_STORE_CTX_get_error(context)
                return .failure(
                    ChainFailure(
                        reason: String(cString: X509_verify_cert_error_string(Int(code))),
                        isValidityPeriod: code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID))
            }
            guard let chain = X509_STORE_CTX_get0_chain(context) else {
                return .failure(ChainFailure(reason: "no chain", isValidityPeriod: false))
            }
            // The context owns its chain: each certificate is retained here.
            let certificates = (0..<CIAP_sk_X509_num(chain)).compactMap { index in
                CIAP_sk_X509_value(chain, index).map(X509Certificate.init(retaining:))
            }
            return .success(certificates)
        }
    }
}

/// A chain that verified once, with the window in which all three
/// certificates are valid: effective dates in [notBefore, notAfter).
struct VerifiedChain: Sendable {
    let leaf: X509Certificate
    let intermediate: X509Certificate
    let root: X509Certificate
    let leafKey: ES256PublicKey
    let validFromSeconds: Int64
    let validUntilSeconds: Int64

    /// Checks the Apple OIDs and the P-256 leaf key, and computes the window.
    static func make(leaf: X509Certificate, intermediate: X509Certificate, root: X509Certificate)
        -> Result<VerifiedChain, VerificationFailure>
    {
        guard leaf.hasExtension(oid: AppleCertificateOID.receiptSigning) else { return .failure(.wrongOID(.leaf)) }
        guard intermediate.hasExtension(oid: AppleCertificateOID.wwdrIntermediate) else {
            return .failure(.wrongOID(.intermediate))
        }
        guard let key = leaf.es256PublicKey else {
            return .failure(.badCertificate(reason: "leaf key is not P-256"))
        }
        let certificates = [leaf, intermediate, root]
        let starts = certificates.compactMap(\.notBeforeSeconds)
        let ends = certificates.compactMap(\.notAfterSeconds)
        guard starts.count == 3, ends.count == 3, let start = starts.max(), let end = ends.min() else {
            return .failure(.badCertificate(reason: "unreadable validity dates"))
        }
        return .success(
            VerifiedChain(
                leaf: leaf, intermediate: intermediate, root: root, leafKey: key,
                validFromSeconds: start, validUntilSeconds: end))
    }

    /// Whether every certificate is valid at `seconds` (OpenSSL semantics:
    /// notBefore inclusive, notAfter exclusive).
    func isValid(atSeconds seconds: Int64) -> Bool {
        seconds >= validFromSeconds && seconds < validUntilSeconds
    }
}

/// Apple's marker extensions for App Store signing certificates.
enum AppleCertificateOID {
    /// On the leaf ("Prod ECC Mac App Store and iTunes Store Receipt Signing").
    static let receiptSigning = "1.2.840.113635.100.6.11.1"
    /// On the Apple Worldwide Developer Relations intermediate.
    static let wwdrIntermediate = "1.2.840.113635.100.6.2.1"
}
