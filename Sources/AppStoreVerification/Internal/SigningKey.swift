import COpenSSL

/// An owned EC private key (`EVP_PKEY*`) for the local testing CA only.
final class SigningKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Generates a key on "P-256" or "P-384".
    init?(curveName: String) {
        guard let key = CIAP_EC_generate(curveName) else {
            ERR_clear_error()
            return nil
        }
        pointer = key
    }

    /// Takes ownership of a key (e.g. one parsed from a persisted CA).
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// ES256 over `message`: SHA-256, ECDSA, returned as raw r||s (32+32 bytes).
    func signES256(_ message: [UInt8]) -> [UInt8]? {
        guard let der = signDER(message) else { return nil }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature = parsed else { return nil }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer? = nil
        var s: OpaquePointer? = nil
        ECDSA_SIG_get0(signature, &r, &s)
        var raw = [UInt8](repeating: 0, count: VerificationLimits.signatureLengthBytes)
        let half = Int32(VerificationLimits.signatureLengthBytes / 2)
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, half) + BN_bn2binpad(s, buffer.baseAddress! + Int(half), half)
        }
        return written == half * 2 ? raw : nil
    }

    private func signDER(_ message: [UInt8]) -> [UInt8]? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else { return nil }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else { return nil }
        var output = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &output, &length, message, message.count) == 1 else { return nil }
        return Array(output[..<length])
    }
}
