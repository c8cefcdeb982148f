import HTTPServer
import ServiceKit

/// The id that ties one request's log lines, backend calls (gRPC metadata
/// `x-request-id`) and response (`X-Request-Id`) together. A client's id is
/// kept when it is sane; otherwise the gateway makes one.
public enum RequestID {
    /// The response and request header name.
    public static let headerName = "X-Request-Id"
    /// The gRPC metadata key sent to the services.
    public static let metadataKey = "x-request-id"

    /// The client's id when there is exactly one `X-Request-Id` of 1...128
    /// characters from [A-Za-z0-9._:-] (nothing that could forge a log
    /// field or a header); nil otherwise.
    public static func accepted(from headers: HTTPHeaders) -> String? {
        let values = headers.values(headerName)
        guard values.count == 1, let value = values.first else { return nil }
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= GatewayLimits.requestIdBytesMax, bytes.allSatisfy(isAllowed) else {
            return nil
        }
        return value
    }

    /// The client's sane id, or a fresh random one.
    public static func resolve(_ headers: HTTPHeaders) -> String {
        accepted(from: headers) ?? generate()
    }

    /// 32 random lower-case hex digits: 128 bits from the system generator,
    /// fetched in batches (`RandomWordBuffer`).
    public static func generate() -> String {
        generate(from: RandomWordBuffer.shared)
    }

    static func generate(from random: RandomWordBuffer) -> String {
        String(unsafeUninitializedCapacity: 32) { text in
            var position = 0
            for _ in 0..<2 {
                var word = random.next()
                for _ in 0..<16 {
                    let nibble = UInt8(truncatingIfNeeded: word & 0xF)
                    text[position] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble
                    position += 1
                    word >>= 4
                }
            }
            return 32
        }
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
            || byte == UInt8(ascii: "-")
    }
}
