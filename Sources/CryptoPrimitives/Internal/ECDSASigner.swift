import COpenSSL

/// ECDSA with SHA-256 through `EVP_DigestSign`, returning OpenSSL's DER
/// signature. One `EVP_MD_CTX` per call, freed before returning.
enum ECDSASigner {
    static func signDER(_ message: some Collection<UInt8>, with key: PKeyHandle) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .signingFailed }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else { throw .signingFailed }
        let signature: [UInt8]? = ContiguousBytes.with(message) { input in
            var length = 0
            guard EVP_DigestSign(context, nil, &length, input.baseAddress, input.count) == 1, length > 0 else {
                return nil
            }
            var output = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &output, &length, input.baseAddress, input.count) == 1 else { return nil }
            return Array(output[..<length])
        }
        guard let signature else { throw .signingFailed }
        return signature
    }
}
