import COpenSSL
import CryptoPrimitives

/// The local testing CA's OCSP answers, built with OpenSSL's OCSP API.
struct OCSPResponder {
    let leaf: X509Certificate
    let intermediate: X509Certificate
    let root: X509Certificate
    let intermediateKey: ECPrivateKey
    let rootKey: ECPrivateKey
    let strangerKey: ECPrivateKey
    /// Self-signed, outside the chain: signs `.signedByStranger` answers.
    let strangerCertificate: X509Certificate

    func respond(
        requestDER: [UInt8], answer: LocalTestingCertificateAuthority.OCSPAnswer, nowSeconds: Int64
    ) -> [UInt8]? {
        if case .tryLater = answer {
            guard let response = OCSP_response_create(OCSP_RESPONSE_STATUS_TRYLATER, nil) else { return nil }
            defer { OCSP_RESPONSE_free(response) }
            return encode(response)
        }
        let parsed: OpaquePointer? = requestDER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_REQUEST(nil, &cursor, buffer.count)
        }
        guard let request = parsed else { return nil }
        defer { OCSP_REQUEST_free(request) }
        guard OCSP_request_onereq_count(request) == 1,
            let one = OCSP_request_onereq_get0(request, 0),
            let requestedId = OCSP_onereq_get0_id(one)
        else { return nil }
        let candidates: [(X509Certificate, X509Certificate, ECPrivateKey)] = [
            (leaf, intermediate, intermediateKey), (intermediate, root, rootKey),
        ]
        for (subject, issuer, issuerKey) in candidates where matches(requestedId, subject: subject, issuer: issuer) {
            return basicResponse(
                for: requestedId, issuer: issuer, issuerKey: issuerKey, answer: answer, nowSeconds: nowSeconds)
        }
        return nil
    }

    private func matches(_ requestedId: OpaquePointer, subject: X509Certificate, issuer: X509Certificate) -> Bool {
        let candidate = subject.withPointer { subjectPointer in
            issuer.withPointer { OCSP_cert_to_id(EVP_sha256(), subjectPointer, $0) }
        }
        guard let candidate else { return false }
        defer { OCSP_CERTID_free(candidate) }
        return OCSP_id_cmp(candidate, requestedId) == 0
    }

    private func basicResponse(
        for certificateId: OpaquePointer, issuer: X509Certificate, issuerKey: ECPrivateKey,
        answer: LocalTestingCertificateAuthority.OCSPAnswer, nowSeconds: Int64
    ) -> [UInt8]? {
        guard let basic = OCSP_BASICRESP_new() else { return nil }
        defer { OCSP_BASICRESP_free(basic) }
        let old = answer == .stale || answer == .oldWithoutNextUpdate
        let thisSeconds = old ? nowSeconds - 7 * 86_400 : nowSeconds - 60
        let nextSeconds = answer == .stale ? nowSeconds - 6 * 86_400 : nowSeconds + 86_400
        guard let thisUpdate = ASN1_GENERALIZEDTIME_set(nil, time_t(thisSeconds)) else { return nil }
        defer { ASN1_GENERALIZEDTIME_free(thisUpdate) }
        guard let nextUpdate = ASN1_GENERALIZEDTIME_set(nil, time_t(nextSeconds)) else { return nil }
        defer { ASN1_GENERALIZEDTIME_free(nextUpdate) }
        let status: Int32
        switch answer {
        case .revoked: status = V_OCSP_CERTSTATUS_REVOKED
        case .unknown: status = V_OCSP_CERTSTATUS_UNKNOWN
        default: status = V_OCSP_CERTSTATUS_GOOD
        }
        guard
            OCSP_basic_add1_status(
                basic, certificateId, status,
                status == V_OCSP_CERTSTATUS_REVOKED ? OCSP_REVOKED_STATUS_KEYCOMPROMISE : -1,
                status == V_OCSP_CERTSTATUS_REVOKED ? thisUpdate : nil, thisUpdate,
                answer == .oldWithoutNextUpdate ? nil : nextUpdate) != nil
        else { return nil }
        let stranger = answer == .signedByStranger
        let signer = stranger ? strangerCertificate : issuer
        let key = stranger ? strangerKey : issuerKey
        // The issuer signs directly (the verifier already has it); a stranger
        // ships its certificate, which does not chain to the trusted root.
        let flags = stranger ? 0 : UInt(OCSP_NOCERTS)
        let signed = signer.withPointer { signerPointer in
            key.withUnsafeEVPPKEY { OCSP_basic_sign(basic, signerPointer, $0, EVP_sha256(), nil, flags) }
        }
        guard signed == 1 else {
            ERR_clear_error()
            return nil
        }
        guard let response = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic) else { return nil }
        defer { OCSP_RESPONSE_free(response) }
        return encode(response)
    }

    private func encode(_ response: OpaquePointer) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_OCSP_RESPONSE(response, &output)
        guard length > 0, let output else { return nil }
        defer { CIAP_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
