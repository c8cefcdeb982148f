/// Percent-encoding of `grpc-message` as the gRPC HTTP/2 protocol specifies:
/// UTF-8 bytes outside printable ASCII, and `%` itself, become `%XX`; so do
/// leading and trailing spaces, which an HTTP/2 field value may not have
/// (RFC 9113 8.2.1: nghttp2 drops such a field, and the status text with it).
public enum GRPCMessageEncoding {
    public static func encode(_ message: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(message.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        let bytes = message.utf8
        let space = UInt8(ascii: " ")
        // The message's spaces before `first` and after `last` are its edges.
        let first = bytes.firstIndex { $0 != space } ?? bytes.endIndex
        let last = bytes.lastIndex { $0 != space } ?? bytes.startIndex
        for index in bytes.indices {
            let byte = bytes[index]
            let isEdgeSpace = byte == space && (index < first || index > last)
            if byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "%") && !isEdgeSpace {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%")); out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes leniently: malformed escapes are kept as they are.
    public static func decode(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
