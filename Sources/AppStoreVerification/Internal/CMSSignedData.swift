import COpenSSL

/// An owned OpenSSL CMS SignedData (`CMS_ContentInfo*`, PKCS #7 read as
/// CMS), freed in deinit: the thin layer `AppReceiptSignatureVerifier`
/// reads a receipt's signature through. Not shared between threads.
final class CMSSignedData {
    /// Owned; never escapes this type.
    private let content: OpaquePointer

    /// Parses DER or BER; nil when OpenSSL cannot read a ContentInfo or
    /// bytes follow it.
    init?(der: [UInt8]) {
        guard let parsed = decodeWholeDER(der, { d2i_CMS_ContentInfo(nil, $0, $1) }, free: CMS_ContentInfo_free) else {
            return nil
        }
        content = parsed
    }

    deinit { CMS_ContentInfo_free(content) }

    /// The number of SignerInfos (0 when it is not SignedData).
    var signerCount: Int {
        let count = Int(CIAP_CMS_signer_infos_count(content))
        // OpenSSL queues an error for a ContentInfo that is not SignedData.
        ERR_clear_error()
        return count
    }

    /// Whether the one signer's digest is SHA-1 or SHA-256, the only two
    /// the App Store has signed receipts with (SHA-1 until January 2025).
    var signerDigestIsApples: Bool {
        let digest = CIAP_CMS_first_signer_digest_nid(content)
        ERR_clear_error()
        return digest == NID_sha1 || digest == NID_sha256
    }

    /// Whether the signature matches the attached content, the signer's
    /// certificate found among those the SignedData carries; its chain is
    /// not looked at (the caller checks it against its own roots).
    func signatureMatchesContent() -> Bool {
        let verified = CMS_verify(content, nil, nil, nil, nil, UInt32(CMS_NO_SIGNER_CERT_VERIFY | CMS_BINARY)) == 1
        ERR_clear_error()
        return verified
    }

    /// The one signer's certificate, after `signatureMatchesContent`
    /// returned true (OpenSSL records the signers while it verifies); nil
    /// when there is not exactly one.
    func signer() -> X509Certificate? {
        // Borrowed certificates in an owned stack: free the stack only.
        guard let signers = CMS_get0_signers(content) else {
            ERR_clear_error()
            return nil
        }
        defer { CIAP_sk_X509_free(signers) }
        guard CIAP_sk_X509_num(signers) == 1, let signer = CIAP_sk_X509_value(signers, 0) else { return nil }
        return X509Certificate(retaining: signer)
    }

    /// Runs `body` with the certificates the SignedData carries, as an
    /// OpenSSL stack valid during `body` only (nil when it carries none).
    func withCarriedCertificates<Result>(_ body: (OpaquePointer?) -> Result) -> Result {
        // CMS_get1_certs gives a stack holding its own references.
        let carried = CMS_get1_certs(content)
        defer { if let carried { CIAP_sk_X509_pop_free(carried) } }
        return body(carried)
    }
}
