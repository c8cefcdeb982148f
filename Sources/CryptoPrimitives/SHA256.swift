import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL's one-shot digest.
public enum SHA256 {
    /// The digest length.
    public static let digestBytes = 32

    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        ContiguousBytes.with(bytes) { input in
            [UInt8](unsafeUninitializedCapacity: digestBytes) { output, initializedCount in
                var length: UInt32 = 0
                let result = EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
                // EVP_Digest fails only when memory runs out; there is no honest fallback.
                precondition(result == 1 && Int(length) == digestBytes, "SHA-256 failed")
                initializedCount = digestBytes
            }
        }
    }

    /// The digest as 64 lower-case hex digits.
    public static func hexDigest(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: hash(bytes).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
