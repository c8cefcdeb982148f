import COpenSSL
import Foundation

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
    /// The digest is computed once here and checked with a verify context
    /// initialised once per key and reused (no per-call provider fetches).
    func verifyES256(message: [UInt8], rawSignature: [UInt8]) -> Bool {
        guard rawSignature.count == VerificationLimits.signatureLengthBytes else { return false }
        let derSignature = Self.derSignature(fromRaw: rawSignature)
        guard let context = contexts.take() ?? Self.newVerifyContext(pointer) else { return false }
        let result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(SHA256_DIGEST_LENGTH)) { digest in
            message.withUnsafeBufferPointer { input in
                _ = SHA256(input.baseAddress, input.count, digest.baseAddress)
            }
            return EVP_PKEY_verify(context, derSignature, derSignature.count, digest.baseAddress, digest.count)
        }
        ERR_clear_error()
        contexts.give(context)
        return result == 1
    }

    /// Reusable `EVP_PKEY_CTX`s initialised for verification with this key.
    private let contexts = VerifyContextPool()

    /// A fresh context ready for `EVP_PKEY_verify`, nil if OpenSSL refuses.
    private static func newVerifyContext(_ key: OpaquePointer) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            ERR_clear_error()
            return nil
        }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            ERR_clear_error()
            return nil
        }
        return context
    }

    /// Encodes r||s as a DER ECDSA-Sig-Value, byte for byte what
    /// `i2d_ECDSA_SIG` produces: each half as a minimal unsigned INTEGER
    /// (leading zeros dropped, 0x00 prefixed when the top bit is set, zero as
    /// `02 01 00`). With 32-byte halves every length fits in one byte.
    static func derSignature(fromRaw raw: [UInt8]) -> [UInt8] {
        let half = raw.count / 2
        precondition(half <= 64, "ECDSA halves longer than 64 bytes need long-form DER lengths")
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var digits = bytes.drop { $0 == 0 }
            if digits.isEmpty { digits = [0] }
            let needsPad = digits.first! & 0x80 != 0
            return [0x02, UInt8(digits.count + (needsPad ? 1 : 0))] + (needsPad ? [0] : []) + digits
        }
        let body = integer(raw[0..<half]) + integer(raw[half...])
        return [0x30, UInt8(body.count)] + body
    }
}

/// A small lock-protected stack of verify contexts for one key: a context is
/// used by one thread at a time, so concurrent verifications each take their
/// own, and at most `VerificationLimits.verifyContextsPerKeyMax` are kept.
final class VerifyContextPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [OpaquePointer] = []

    deinit { for context in idle { EVP_PKEY_CTX_free(context) } }

    /// An idle context, or nil when none is free.
    func take() -> OpaquePointer? {
        lock.lock()
        defer { lock.unlock() }
        return idle.popLast()
    }

    /// Returns a context after use; frees it when the pool is full.
    func give(_ context: OpaquePointer) {
        lock.lock()
        let kept = idle.count < VerificationLimits.verifyContextsPerKeyMax
        if kept { idle.append(context) }
        lock.unlock()
        if !kept { EVP_PKEY_CTX_free(context) }
    }
}
