/// Hands C calls a buffer that is never nil: an empty collection becomes a
/// pointer to one unused byte with count 0, as some OpenSSL functions
/// refuse a NULL pointer even for no bytes.
enum ContiguousBytes {
    static func with<Result>(
        _ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result {
        if bytes.isEmpty {
            var placeholder: UInt8 = 0
            return try withUnsafePointer(to: &placeholder) { try body(UnsafeBufferPointer(start: $0, count: 0)) }
        }
        if let result = try bytes.withContiguousStorageIfAvailable(body) { return result }
        return try Array(bytes).withUnsafeBufferPointer(body)
    }
}
