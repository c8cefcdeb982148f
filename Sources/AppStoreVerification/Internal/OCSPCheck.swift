import COpenSSL

/// OCSP request building and response checking with OpenSSL's OCSP API, kept
/// free of I/O: the verifier fetches bytes through an `OCSPFetcher` and hands
/// them here. Mirrors Apple's library: the response must be SUCCESSFUL, signed
/// by the issuer or by a delegate of it carrying the OCSP-signing EKU, and hold
/// a GOOD status for exactly this certificate.
struct OCSPCheck {
    let certificate: X509Certificate
    let issuer: X509Certificate
    let root: X509Certificate
    /// "Now" for the signer's chain and the response's freshness.
    let nowSeconds: Int64

    /// A DER OCSP request for `certificate` (SHA-256 CertID), nil if OpenSSL fails.
    func requestDER() -> [UInt8]? {
        guard let request = OCSP_REQUEST_new() else { return nil }
        defer { OCSP_REQUEST_free(request) }
        guard let certificateId = makeCertificateId() else { return nil }
        // On success the request owns the CertID.
        guard OCSP_request_add0_id(request, certificateId) != nil else {
            OCSP_CERTID_free(certificateId)
            return nil
        }
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_OCSP_REQUEST(request, &output)
        guard length > 0, let output else { return nil }
        defer { CIAP_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private func makeCertificateId() -> OpaquePointer? {
        certificate.withPointer { subject in
            issuer.withPointer { issuerPointer in OCSP_cert_to_id(EVP_sha256(), subject, issuerPointer) }
        }
    }

    /// Decides a DER OCSP response at the current time and returns until
    /// when its GOOD answer holds: its `nextUpdate`, or without one
    /// `thisUpdate` plus `ocspAnswerWithoutNextUpdateAgeMaxSeconds`. Unusable
    /// or stale answers are `.retryable` (never a silent pass); a revoked,
    /// unknown or untrusted answer is `.badChain`.
    @discardableResult
    func check(responseDER: [UInt8]) throws(VerificationFailure) -> Int64 {
        let parsed: OpaquePointer? = responseDER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let response = parsed else {
            ERR_clear_error()
            throw .retryable(reason: "unparsable OCSP response")
        }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            throw .retryable(reason: "OCSP responder status \(status)")
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            ERR_clear_error()
            throw .retryable(reason: "OCSP response without basic response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        try verifySigner(basic)
        return try checkStatus(basic)
    }

    private func verifySigner(_ basic: OpaquePointer) throws(VerificationFailure) {
        guard let store = X509_STORE_new() else { throw .retryable(reason: "out of memory") }
        defer { X509_STORE_free(store) }
        guard let untrusted = CIAP_sk_X509_new_null() else { throw .retryable(reason: "out of memory") }
        defer { CIAP_sk_X509_free(untrusted) }
        let verified: Int32 = root.withPointer { rootPointer in
            issuer.withPointer { issuerPointer in
                _ = X509_STORE_add_cert(store, rootPointer)
                // Contexts made from the store inherit this verification time.
                X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store), time_t(nowSeconds))
                _ = CIAP_sk_X509_push(untrusted, issuerPointer)
                return OCSP_basic_verify(basic, untrusted, store, 0)
            }
        }
        ERR_clear_error()
        guard verified == 1 else { throw .badChain(reason: "OCSP response signature not trusted") }
    }

    /// The status for this certificate, fresh at `nowSeconds`; GOOD returns
    /// until when it holds.
    private func checkStatus(_ basic: OpaquePointer) throws(VerificationFailure) -> Int64 {
        guard let certificateId = makeCertificateId() else { throw .retryable(reason: "out of memory") }
        defer { OCSP_CERTID_free(certificateId) }
        var status: Int32 = -1
        var reason: Int32 = -1
        var revokedAt: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        guard OCSP_resp_find_status(basic, certificateId, &status, &reason, &revokedAt, &thisUpdate, &nextUpdate) == 1
        else { throw .badChain(reason: "OCSP response has no status for the certificate") }
        let skewSeconds = Int64(VerificationLimits.ocspClockSkewSeconds)
        guard let thisUpdateSeconds = X509Certificate.seconds(thisUpdate), thisUpdateSeconds <= nowSeconds + skewSeconds
        else { throw .retryable(reason: "OCSP response not yet valid") }
        let validUntilSeconds: Int64
        if let nextUpdate {
            guard let nextUpdateSeconds = X509Certificate.seconds(nextUpdate),
                nextUpdateSeconds >= nowSeconds - skewSeconds
            else { throw .retryable(reason: "stale OCSP response") }
            validUntilSeconds = nextUpdateSeconds
        } else {
            // No nextUpdate sets no end: without an age bound an old GOOD
            // answer replayed from the plain-HTTP path would pass forever.
            guard
                thisUpdateSeconds >= nowSeconds - Int64(VerificationLimits.ocspAnswerWithoutNextUpdateAgeMaxSeconds)
                    - skewSeconds
            else { throw .retryable(reason: "stale OCSP response (no nextUpdate)") }
            validUntilSeconds = thisUpdateSeconds + Int64(VerificationLimits.ocspAnswerWithoutNextUpdateAgeMaxSeconds)
        }
        switch status {
        case V_OCSP_CERTSTATUS_GOOD: return validUntilSeconds
        case V_OCSP_CERTSTATUS_REVOKED: throw .badChain(reason: "certificate revoked")
        default: throw .badChain(reason: "OCSP status unknown")
        }
    }
}
