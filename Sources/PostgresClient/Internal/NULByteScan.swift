import Foundation

/// Whether a text holds a NUL byte, which libpq's C strings would silently
/// cut the text short at. `memchr` over the string's contiguous UTF-8
/// (vectorised by the C library) instead of a byte-by-byte walk: every
/// parameter of every statement is checked, and a purchase's parameters
/// carry kilobytes (the JWS, Apple's payload).
enum NULByteScan {
    static func containsNUL(_ text: String) -> Bool {
        let scanned = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
        // A string without contiguous UTF-8 (e.g. bridged): walk it.
        return scanned ?? text.utf8.contains(0)
    }
}
