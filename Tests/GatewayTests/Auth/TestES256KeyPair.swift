import COpenSSL
import XCTest

/// A throwaway EC P-256 key pair generated with OpenSSL for tests: signs
/// like a real ES256 issuer (raw r||s) and exports its public key as PEM.
final class TestES256KeyPair {
    private let key: OpaquePointer

    init(curveNID: Int32 = NID_X9_62_prime256v1) {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        precondition(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, curveNID) == 1)
        var generated: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &generated) == 1)
        key = generated!
    }

    deinit { EVP_PKEY_free(key) }

    /// The SubjectPublicKeyInfo PEM.
    var publicKeyPEM: [UInt8] {
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(PEM_write_bio_PUBKEY(bio, key) == 1)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            let count = BIO_read(bio, &chunk, Int32(chunk.count))
            if count <= 0 { break }
            output += chunk[0..<Int(count)]
        }
        return output
    }

    /// A JOSE ES256 signature: r||s, 32 bytes each.
    func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var der = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &der, &length, message, message.count) == 1)
        let signature = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, length)
        }!
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        raw.withUnsafeMutableBufferPointer { buffer in
            precondition(BN_bn2binpad(ECDSA_SIG_get0_r(signature), buffer.baseAddress, 32) == 32)
            precondition(BN_bn2binpad(ECDSA_SIG_get0_s(signature), buffer.baseAddress! + 32, 32) == 32)
        }
        return raw
    }
}
