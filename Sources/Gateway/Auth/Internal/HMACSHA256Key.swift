import COpenSSL

/// An HS256 secret: computes HMAC-SHA256 through OpenSSL and compares in
/// constant time. The secret stays in this value; never log it.
struct HMACSHA256Key: Sendable {
    /// RFC 7518 §3.2: at least the hash size.
    static let secretBytesMin = 32
    static let macBytes = 32

    private let secret: [UInt8]

    init(secret: [UInt8]) {
        precondition(secret.count >= Self.secretBytesMin)
        self.secret = secret
    }

    /// HMAC-SHA256(secret, message).
    func mac(_ message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = secret.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                output.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                         data.count, out.baseAddress, &length)
                }
            }
        }
        // HMAC fails only on allocation failure; there is no honest fallback.
        precondition(result != nil && Int(length) == Self.macBytes, "HMAC-SHA256 failed")
        return Array(output.prefix(Int(length)))
    }

    /// Constant-time check of a received MAC.
    func verify(message: [UInt8], mac received: [UInt8]) -> Bool {
        guard received.count == Self.macBytes else { return false }
        let expected = mac(message)
        return expected.withUnsafeBytes { lhs in
            received.withUnsafeBytes { rhs in CRYPTO_memcmp(lhs.baseAddress, rhs.baseAddress, Self.macBytes) == 0 }
        }
    }
}
