import Foundation
import ServiceKit

/// Version 7 UUIDs (RFC 9562) made in the process: 48 bits of Unix time in
/// milliseconds, then the version, variant and 74 random bits. Keys made of
/// them grow with time, so inserts land on a B-tree's newest leaves (see
/// `UUIDv7Function`, the same ids made by the database).
public enum TimeOrderedUUID {
    /// A new id for `milliseconds` since the Unix epoch (now by default),
    /// its random bits from `random` (Foundation's `UUID()` would open,
    /// read and close /dev/urandom for each id).
    public static func make(
        milliseconds: Int64 = Int64(Date().timeIntervalSince1970 * 1000),
        random: RandomWordBuffer = .shared
    ) -> UUID {
        var bytes = uuid_t(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: random.next(), toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: random.next(), toByteOffset: 8, as: UInt64.self)
        }
        let time = UInt64(max(0, milliseconds))
        bytes.0 = UInt8(truncatingIfNeeded: time >> 40)
        bytes.1 = UInt8(truncatingIfNeeded: time >> 32)
        bytes.2 = UInt8(truncatingIfNeeded: time >> 24)
        bytes.3 = UInt8(truncatingIfNeeded: time >> 16)
        bytes.4 = UInt8(truncatingIfNeeded: time >> 8)
        bytes.5 = UInt8(truncatingIfNeeded: time)
        bytes.6 = (bytes.6 & 0x0F) | 0x70
        bytes.8 = (bytes.8 & 0x3F) | 0x80
        return UUID(uuid: bytes)
    }
}
