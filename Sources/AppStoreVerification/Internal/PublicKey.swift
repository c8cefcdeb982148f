import COpenSSL

/// An owned `EVP_PKEY*` public key. Verification only reads the key, which
/// OpenSSL 3 allows from many threads at once, hence `@unchecked Sendable`.
final class PublicKey: @unchecked Sendable {
    private let pointer: OpaquePointer

    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// Whether this is an EC key on P-256 (prime256v1), as ES256 requires.
    var isP256: Bool {
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        guard CIAP_EVP_PKEY_group_name(pointer, &name, name.count) == 1 else { return false }
        let groupName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return groupName == "prime256v1" || groupName == "P-256"
    }

    /// Verifies a JWS ES256 signature: raw r||s (32+32 bytes) over `message`
    /// with SHA-256. High-S signatures are valid (Apple does not normalise s).
    func verifyES256(message: [UInt8], rawSignature: [UInt8]) -> Bool {
        guard rawSignature.count == VerificationLimits.signatureLengthBytes,
              let derSignature = Self.derSignature(fromRaw: rawSignature) else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = EVP_DigestVerify(context, derSignature, derSignature.count, message, message.count)
        ERR_clear_error()
        return result == 1
    }

    /// Encodes r||s as a DER ECDSA-Sig-Value.
    static func derSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
        let half = raw.count / 2
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw[0..<half].withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
        let s = raw[half...].withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        // On success the signature owns r and s.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_ECDSA_SIG(signature, &output)
        guard length > 0, let output else { return nil }
        defer { CIAP_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
