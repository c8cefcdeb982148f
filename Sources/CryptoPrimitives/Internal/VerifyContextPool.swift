import COpenSSL
import Foundation

/// A small lock-protected stack of `EVP_PKEY_CTX`s initialised for
/// verification with one key: a context is used by one thread at a time, so
/// concurrent verifications each take their own, and at most
/// `CryptoLimits.verifyContextsPerKeyMax` idle ones are kept. Owns every
/// context it holds and frees them in deinit.
final class VerifyContextPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [OpaquePointer] = []
    /// Keeps the key alive as long as any of its contexts.
    private let key: PKeyHandle

    init(key: PKeyHandle) { self.key = key }

    deinit { for context in idle { EVP_PKEY_CTX_free(context) } }

    /// Runs `body` with a context ready for `EVP_PKEY_verify`, false when
    /// OpenSSL cannot make one. Do not let the pointer escape `body`.
    func withContext(_ body: (OpaquePointer) -> Bool) -> Bool {
        guard let context = take() ?? makeContext() else { return false }
        let result = body(context)
        ERR_clear_error()
        give(context)
        return result
    }

    private func take() -> OpaquePointer? {
        lock.lock()
        defer { lock.unlock() }
        return idle.popLast()
    }

    /// Returns a context after use; frees it when the pool is full.
    private func give(_ context: OpaquePointer) {
        lock.lock()
        let kept = idle.count < CryptoLimits.verifyContextsPerKeyMax
        if kept { idle.append(context) }
        lock.unlock()
        if !kept { EVP_PKEY_CTX_free(context) }
    }

    private func makeContext() -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
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
}
