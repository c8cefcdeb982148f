/// Writes gRPC's length-prefixed messages: a compressed flag byte, a 4-byte
/// big-endian length, then the message bytes. This runtime never compresses.
public enum MessageFramer {
    public static let prefixBytes = 5

    public static func frame(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(prefixBytes + message.count)
        let length = UInt32(message.count)
        out.append(0)
        out.append(UInt8(truncatingIfNeeded: length >> 24)); out.append(UInt8(truncatingIfNeeded: length >> 16))
        out.append(UInt8(truncatingIfNeeded: length >> 8)); out.append(UInt8(truncatingIfNeeded: length))
        out.append(contentsOf: message)
        return out
    }
}
