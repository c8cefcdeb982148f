/// Tells the two protocols of the shared port apart from a connection's
/// first bytes: an HTTP/2 client with prior knowledge (h2c) opens with the
/// fixed 24-byte preface (RFC 9113 §3.4); anything else is HTTP/1.x, whose
/// request line can never start with "PRI * HTTP/2.0" (PRI is no method we
/// serve). Pure: the I/O layer feeds what it has read so far.
public enum ConnectionPreface {
    /// "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".
    public static let http2ClientPreface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// The verdict on the bytes read so far.
    public enum Verdict: Sendable, Equatable {
        /// The complete HTTP/2 preface arrived.
        case http2
        /// The bytes diverge from the preface: HTTP/1.x.
        case http1
        /// Every byte so far matches the preface: read more.
        case undecided
    }

    public static func classify(_ bytes: some Collection<UInt8>) -> Verdict {
        var matched = 0
        for (byte, expected) in zip(bytes, http2ClientPreface) {
            guard byte == expected else { return .http1 }
            matched += 1
        }
        return matched == http2ClientPreface.count ? .http2 : .undecided
    }
}
