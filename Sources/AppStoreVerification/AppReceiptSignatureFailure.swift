/// Why a StoreKit 1 app receipt's signature was refused
/// (`AppReceiptSignatureVerifier`). `code` is stable and safe to log or
/// answer: it never carries receipt content. None is retryable: the same
/// receipt always gets the same answer.
public enum AppReceiptSignatureFailure: Error, Equatable, Sendable {
    /// Not a SignedData OpenSSL can read, not exactly one signer, or the
    /// signature does not match the receipt's content (altered or forged).
    case signatureInvalid
    /// The signer's certificate does not chain to a trusted root, or the
    /// chain was not valid when the receipt says it was created.
    case chainUntrusted(reason: String)
    /// The chain is trusted but is not Apple's receipt-signing chain: the
    /// leaf lacks Apple's receipt-signing marker, the intermediate the Apple
    /// Worldwide Developer Relations marker, or it is not leaf,
    /// intermediate, root (a developer's own certificate also chains to an
    /// Apple root).
    case notReceiptSigner

    /// The stable name (`receipt-failure` trailer, problem detail, logs).
    public var code: String {
        switch self {
        case .signatureInvalid: "signatureInvalid"
        case .chainUntrusted: "chainUntrusted"
        case .notReceiptSigner: "notReceiptSigner"
        }
    }
}
