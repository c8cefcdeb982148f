/// HTTP/2 frames and HPACK fields written by hand, for tests that send what
/// a real client never would: the frame header (RFC 9113 4.1), HPACK
/// integers (RFC 7541 5.1) and literal fields (6.2), never Huffman-coded.
public enum HTTP2FrameBytes {
    /// The client connection preface (RFC 9113 3.4).
    public static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// One frame: its 9-byte header, then `payload`.
    public static func frame(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [
            UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
            UInt8(streamID >> 24 & 0x7F), UInt8(streamID >> 16 & 0xFF), UInt8(streamID >> 8 & 0xFF),
            UInt8(streamID & 0xFF),
        ]
            + payload
    }

    /// An HPACK integer with an empty prefix of `prefixBits` bits.
    public static func hpackInteger(_ value: Int, prefixBits: Int) -> [UInt8] {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else { return [UInt8(value)] }
        var bytes = [UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        return bytes + [UInt8(rest)]
    }

    /// A string literal: its length, then its bytes (no Huffman coding).
    public static func hpackString(_ text: String) -> [UInt8] {
        hpackInteger(text.utf8.count, prefixBits: 7) + Array(text.utf8)
    }

    /// A literal field without indexing and a new name (6.2.2).
    public static func literalField(name: String, value: String) -> [UInt8] {
        [0x00] + hpackString(name) + hpackString(value)
    }

    /// A literal field whose name is entry `nameIndex` of the static table:
    /// without indexing (6.2.2), or with incremental indexing (6.2.1).
    public static func literalField(nameIndex: Int, value: String, indexed: Bool = false) -> [UInt8] {
        var first = hpackInteger(nameIndex, prefixBits: indexed ? 6 : 4)
        if indexed { first[0] |= 0x40 }
        return first + hpackString(value)
    }
}
