import COpenSSL

/// An HMAC-SHA256 key (RFC 2104, FIPS 198-1): computes authentication codes
/// and checks received ones in constant time. Minimum key lengths are the
/// caller's policy (RFC 7518 section 3.2 asks 32 bytes for HS256). The
/// secret never appears in descriptions or reflection.
public struct HMACSHA256Key: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The length of an authentication code.
    public static let codeBytes = 32

    private let secret: [UInt8]

    public init(secret: [UInt8]) {
        // HMAC pads a short key with zeros to the block size (RFC 2104), so
        // the empty key is the one zero byte; OpenSSL refuses a 0-byte key.
        self.secret = secret.isEmpty ? [0] : secret
    }

    /// HMAC-SHA256(secret, message), 32 bytes.
    public func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
        ContiguousBytes.with(secret) { key in
            ContiguousBytes.with(message) { data in
                [UInt8](unsafeUninitializedCapacity: Self.codeBytes) { output, initializedCount in
                    var length: UInt32 = 0
                    let result = HMAC(
                        EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress, data.count,
                        output.baseAddress, &length)
                    // HMAC fails only when memory runs out; there is no honest fallback.
                    precondition(result != nil && Int(length) == Self.codeBytes, "HMAC-SHA256 failed")
                    initializedCount = Self.codeBytes
                }
            }
        }
    }

    /// Whether `code` is this key's authentication code for `message`,
    /// compared in constant time.
    public func isValidAuthenticationCode(_ code: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        guard code.count == Self.codeBytes else { return false }
        return ConstantTime.equals(authenticationCode(for: message), code)
    }

    public var description: String { "HMACSHA256Key(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
