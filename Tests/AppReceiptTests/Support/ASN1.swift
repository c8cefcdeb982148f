/// A small ASN.1 tree and writer for building receipts in tests, in DER or
/// in the BER forms Xcode and StoreKit write: indefinite lengths,
/// constructed (split) OCTET STRINGs, long-form lengths with leading zeros.
indirect enum ASN1 {
    case primitive(tag: UInt8, content: [UInt8])
    case constructed(tag: UInt8, children: [ASN1])
    /// Bytes placed as they are (hand-made faults).
    case raw([UInt8])

    static func integer(_ value: Int64) -> ASN1 {
        var octets = withUnsafeBytes(of: value.bigEndian, Array.init)
        // Minimal two's complement: drop a leading octet while the next one keeps the sign.
        while octets.count > 1,
            (octets[0] == 0x00 && octets[1] & 0x80 == 0) || (octets[0] == 0xFF && octets[1] & 0x80 != 0)
        {
            octets.removeFirst()
        }
        return .primitive(tag: 0x02, content: octets)
    }

    static func utf8(_ text: String) -> ASN1 { .primitive(tag: 0x0C, content: Array(text.utf8)) }
    static func ia5(_ text: String) -> ASN1 { .primitive(tag: 0x16, content: Array(text.utf8)) }
    static func octets(_ bytes: [UInt8]) -> ASN1 { .primitive(tag: 0x04, content: bytes) }
    static func oid(_ encoded: [UInt8]) -> ASN1 { .primitive(tag: 0x06, content: encoded) }
    static let null = ASN1.primitive(tag: 0x05, content: [])
    static func sequence(_ children: [ASN1]) -> ASN1 { .constructed(tag: 0x30, children: children) }
    static func set(_ children: [ASN1]) -> ASN1 { .constructed(tag: 0x31, children: children) }
    /// `[number]` constructed (EXPLICIT, or IMPLICIT over a constructed type).
    static func context(_ number: UInt8, _ children: [ASN1]) -> ASN1 {
        .constructed(tag: 0xA0 | number, children: children)
    }

    /// 1.2.840.113549.1.7.2 and .1, and SHA-256's 2.16.840.1.101.3.4.2.1.
    static let signedDataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    static let dataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    static let sha256OID: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
}

/// How `ASN1.encoded` writes lengths and OCTET STRINGs.
struct BERStyle {
    /// Constructed elements get 0x80 and an end-of-contents marker.
    var indefiniteLengths = false
    /// OCTET STRINGs longer than this are split into a constructed OCTET
    /// STRING of segments of this many bytes.
    var octetStringSegmentBytes: Int?
    /// Segments are grouped in pairs inside a second constructed level.
    var nestedSegments = false
    /// Every definite length in the long form with four octets (BER allows
    /// the leading zeros; DER does not).
    var longFormLengths = false

    static let der = BERStyle()
    /// As Xcode writes: indefinite lengths and a split eContent.
    static let xcode = BERStyle(indefiniteLengths: true, octetStringSegmentBytes: 48)
    /// Every BER liberty at once.
    static let everyLiberty = BERStyle(
        indefiniteLengths: true, octetStringSegmentBytes: 7, nestedSegments: true, longFormLengths: true)
}

extension ASN1 {
    func encoded(_ style: BERStyle = .der) -> [UInt8] {
        switch self {
        case .raw(let bytes):
            return bytes
        case .primitive(tag: 0x04, let content):
            if let segmentBytes = style.octetStringSegmentBytes, content.count > segmentBytes {
                return Self.splitOctetString(content, segmentBytes: segmentBytes, style: style)
            }
            return [0x04] + Self.length(content.count, style) + content
        case .primitive(let tag, let content):
            return [tag] + Self.length(content.count, style) + content
        case .constructed(let tag, let children):
            let content = children.flatMap { $0.encoded(style) }
            if style.indefiniteLengths { return [tag, 0x80] + content + [0x00, 0x00] }
            return [tag] + Self.length(content.count, style) + content
        }
    }

    private static func splitOctetString(_ content: [UInt8], segmentBytes: Int, style: BERStyle) -> [UInt8] {
        var segments: [ASN1] = stride(from: 0, to: content.count, by: segmentBytes).map {
            ASN1.primitive(tag: 0x04, content: Array(content[$0..<min($0 + segmentBytes, content.count)]))
        }
        if style.nestedSegments {
            segments = stride(from: 0, to: segments.count, by: 2).map {
                ASN1.constructed(tag: 0x24, children: Array(segments[$0..<min($0 + 2, segments.count)]))
            }
        }
        var unsplit = style
        unsplit.octetStringSegmentBytes = nil
        return ASN1.constructed(tag: 0x24, children: segments).encoded(unsplit)
    }

    private static func length(_ count: Int, _ style: BERStyle) -> [UInt8] {
        if style.longFormLengths {
            return [
                0x84, UInt8(count >> 24 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF),
                UInt8(count & 0xFF),
            ]
        }
        if count < 0x80 { return [UInt8(count)] }
        var octets: [UInt8] = []
        var rest = count
        while rest > 0 {
            octets.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }
}
