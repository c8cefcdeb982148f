/// Percent-encoding of `grpc-message` as the gRPC HTTP/2 protocol specifies:
/// UTF-8 bytes outside printable ASCII, and `%` itself, become `%XX`.
public enum GRPCMessageEncoding {
    public static func encode(_ message: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(message.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in message.utf8 {
            if byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "%") {
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
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
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
