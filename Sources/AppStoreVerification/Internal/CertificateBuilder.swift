import COpenSSL
import CryptoPrimitives

/// Builds the local testing CA's certificates with OpenSSL's X509 API.
struct CertificateBuilder {
    enum Role { case root, intermediate, leaf }

    let options: LocalTestingCertificateAuthority.Options

    func make(
        commonName: String, serial: Int, key: ECPrivateKey, issuer: X509Certificate?, issuerKey: ECPrivateKey,
        role: Role
    ) -> X509Certificate? {
        guard let certificate = X509_new() else { return nil }
        let owned = X509Certificate(owning: certificate)
        guard X509_set_version(certificate, 2) == 1,
            ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial) == 1,
            setValidity(certificate, role: role),
            key.withUnsafeEVPPKEY({ X509_set_pubkey(certificate, $0) }) == 1,
            let name = X509_get_subject_name(certificate),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1,
            X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, "IAP Local Testing", -1, -1, 0) == 1
        else { return nil }
        let issuerPointer: OpaquePointer = issuer?.withPointer { $0 } ?? certificate
        guard X509_set_issuer_name(certificate, X509_get_subject_name(issuerPointer)) == 1 else { return nil }
        guard addExtensions(certificate, issuer: issuerPointer, role: role) else { return nil }
        guard issuerKey.withUnsafeEVPPKEY({ X509_sign(certificate, $0, EVP_sha256()) }) > 0 else {
            ERR_clear_error()
            return nil
        }
        return owned
    }

    private func setValidity(_ certificate: OpaquePointer, role: Role) -> Bool {
        let from = role == .leaf ? (options.leafValidFromSeconds ?? options.validFromSeconds) : options.validFromSeconds
        let until =
            role == .leaf ? (options.leafValidUntilSeconds ?? options.validUntilSeconds) : options.validUntilSeconds
        return ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(from)) != nil
            && ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(until)) != nil
    }

    private func addExtensions(_ certificate: OpaquePointer, issuer: OpaquePointer, role: Role) -> Bool {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer, certificate, nil, nil, 0)
        var extensions: [(Int32, String)] = [
            (NID_basic_constraints, role == .leaf ? "critical,CA:FALSE" : "critical,CA:TRUE"),
            (NID_key_usage, role == .leaf ? "critical,digitalSignature" : "critical,keyCertSign,cRLSign"),
        ]
        if options.includeKeyIdentifiers {
            extensions.append((NID_subject_key_identifier, "hash"))
            if role != .root { extensions.append((NID_authority_key_identifier, "keyid:always")) }
        }
        if let url = options.ocspResponderURL, role != .root {
            extensions.append((NID_info_access, "OCSP;URI:\(url)"))
        }
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                ERR_clear_error()
                return false
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { return false }
        }
        switch role {
        case .root: return true
        case .intermediate:
            return addMarker(certificate, choice: options.intermediateOID, oid: AppleCertificateOID.wwdrIntermediate)
        case .leaf: return addMarker(certificate, choice: options.leafOID, oid: AppleCertificateOID.receiptSigning)
        }
    }

    /// Adds Apple's marker extension (value: DER NULL), a wrong one, or none.
    private func addMarker(
        _ certificate: OpaquePointer, choice: LocalTestingCertificateAuthority.Options.MarkerOID, oid: String
    ) -> Bool {
        let dotted: String
        switch choice {
        case .omitted: return true
        case .apple: dotted = oid
        case .wrong: dotted = oid + ".99"
        }
        guard let object = OBJ_txt2obj(dotted, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { return false }
        defer { ASN1_OCTET_STRING_free(value) }
        let derNull: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, derNull, Int32(derNull.count)) == 1,
            let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
        else { return false }
        defer { X509_EXTENSION_free(ext) }
        return X509_add_ext(certificate, ext, -1) == 1
    }
}
