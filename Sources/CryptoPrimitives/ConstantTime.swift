import COpenSSL

/// Comparisons whose duration does not depend on where the inputs differ,
/// for MACs and other secrets (OpenSSL's `CRYPTO_memcmp`).
public enum ConstantTime {
    /// Whether `lhs` and `rhs` are equal. The lengths are not secret: unequal
    /// lengths return false at once.
    public static func equals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return ContiguousBytes.with(lhs) { left in
            ContiguousBytes.with(rhs) { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0 }
        }
    }
}
