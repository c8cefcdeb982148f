import COpenSSL

/// An EC P-256 public key owned as an OpenSSL EVP_PKEY (freed in deinit).
/// Immutable after init; OpenSSL 3 allows concurrent verifications with one
/// EVP_PKEY as long as nobody mutates it, hence `@unchecked Sendable`.
final class ES256PublicKey: @unchecked Sendable {
    static let rawSignatureBytes = 64
    private let key: OpaquePointer

    /// Reads a PEM "PUBLIC KEY" (SubjectPublicKeyInfo) and checks the curve.
    init(pem: [UInt8]) throws(JWTConfigurationError) {
        let parsed: OpaquePointer? = pem.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let parsed else {
            ERR_clear_error()
            throw JWTConfigurationError.invalidPublicKey("not a PEM public key")
        }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_EC, Self.groupName(of: parsed) == "prime256v1" else {
            EVP_PKEY_free(parsed)
            throw JWTConfigurationError.invalidPublicKey("not an EC P-256 key")
        }
        key = parsed
    }

    deinit { EVP_PKEY_free(key) }

    private static func groupName(of key: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return nil }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Verifies a JOSE ES256 signature (raw r||s, 32 bytes each) over `message`.
    func verify(message: [UInt8], rawSignature: [UInt8]) -> Bool {
        guard rawSignature.count == Self.rawSignatureBytes, let der = Self.derSignature(fromRaw: rawSignature) else {
            return false
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let result = der.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { data in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, data.baseAddress, data.count)
            }
        }
        return result == 1
    }

    /// JOSE's fixed-width r||s as the DER ECDSA-Sig-Value OpenSSL expects.
    private static func derSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let half = rawSignatureBytes / 2
        let (r, s) = raw.withUnsafeBufferPointer { bytes in
            (BN_bin2bn(bytes.baseAddress, Int32(half), nil), BN_bin2bn(bytes.baseAddress! + half, Int32(half), nil))
        }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        // On success ECDSA_SIG_set0 takes ownership of r and s.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
