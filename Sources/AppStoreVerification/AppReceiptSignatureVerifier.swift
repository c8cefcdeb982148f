import Foundation

/// Checks that a StoreKit 1 app receipt (PKCS #7 / CMS SignedData over the
/// receipt payload) was signed by the App Store: the signature matches the
/// content, the signer's certificate chains to one of the configured roots
/// (Apple Inc. Root; the chain the receipt carries is only a hint, its own
/// root never trusted) at the instant the receipt says it was created, and
/// the chain is Apple's receipt-signing chain (leaf, Apple Worldwide
/// Developer Relations intermediate, root, each with Apple's marker), and
/// its digest is one the App Store signs receipts with (SHA-1 or SHA-256),
/// not whatever algorithm the signer names.
///
/// The chain is checked at the receipt's creation date, not now: Apple's
/// SHA-1 receipt-signing certificates expired in February 2023 and a
/// receipt signed before then stays genuine. That date is inside the
/// signed content, so it cannot be moved without breaking the signature.
/// Read-only after init and safe to share.
public final class AppReceiptSignatureVerifier: Sendable {
    private let trustStore: TrustStore

    /// Trusts `trustedRootsDER` (DER certificates; at least one).
    public init(trustedRootsDER: [Data]) throws(ConfigurationError) {
        guard !trustedRootsDER.isEmpty else { throw .noTrustedRoots }
        trustStore = try TrustStore(rootsDER: trustedRootsDER)
    }

    /// Verifies `receipt` (the decoded DER or BER bytes) with its chain
    /// checked at `createdAt` (the receipt's creation date, type 12).
    public func verify(receipt: [UInt8], createdAt: AppStoreTimestamp) throws(AppReceiptSignatureFailure) {
        guard let signedData = CMSSignedData(der: receipt), signedData.signerCount == 1,
            signedData.signerDigestIsApples,
            signedData.signatureMatchesContent(), let leaf = signedData.signer()
        else { throw .signatureInvalid }
        let chain = signedData.withCarriedCertificates { carried in
            trustStore.verifiedChain(leaf: leaf, untrusted: carried, atSeconds: createdAt.secondsSince1970)
        }
        let certificates: [X509Certificate]
        switch chain {
        case .success(let verified): certificates = verified
        case .failure(let failure): throw .chainUntrusted(reason: failure.reason)
        }
        guard certificates.count == VerificationLimits.certificateChainLength,
            certificates[0].hasExtension(oid: AppleCertificateOID.receiptSigning),
            certificates[1].hasExtension(oid: AppleCertificateOID.wwdrIntermediate)
        else { throw .notReceiptSigner }
    }
}
