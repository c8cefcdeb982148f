/// Finds the receipt payload inside its container: a PKCS #7 (RFC 2315) /
/// CMS (RFC 5652) ContentInfo holding SignedData whose encapsulated content
/// type is `id-data`, the payload being the `eContent` OCTET STRING.
///
///     ContentInfo ::= SEQUENCE { contentType OBJECT IDENTIFIER (signedData),
///                                content [0] EXPLICIT SignedData }
///     SignedData ::= SEQUENCE { version INTEGER, digestAlgorithms SET,
///                               encapContentInfo SEQUENCE { eContentType (data),
///                                                           eContent [0] EXPLICIT OCTET STRING OPTIONAL },
///                               certificates [0] IMPLICIT ... OPTIONAL,
///                               crls [1] IMPLICIT ... OPTIONAL,
///                               signerInfos SET }
///
/// Xcode and StoreKit write it in BER with indefinite lengths and split the
/// eContent into a constructed OCTET STRING; App Store receipts are DER.
/// The certificates and signer infos are not interpreted: the signature is
/// not checked here (see `AppReceipt`).
enum SignedDataReader {
    /// 1.2.840.113549.1.7.2, `id-signedData`.
    static let signedDataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    /// 1.2.840.113549.1.7.1, `id-data`.
    static let dataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]

    /// Where the payload is: a reader, the byte range of the payload in it,
    /// and the nesting depth of its outer element.
    struct Payload {
        let reader: BERReader
        let range: Range<Int>
        let depth: Int
    }

    static func payload(in reader: BERReader) throws(AppReceiptError) -> Payload {
        guard !reader.bytes.isEmpty else { throw reader.error(.truncated, "empty receipt", at: 0) }
        // Say what was sent instead (JSON, a JWS, PEM text) before any length is believed.
        guard reader.bytes[0] == 0x30 else {
            throw reader.error(.badTag, "the receipt does not start with a constructed SEQUENCE", at: 0)
        }
        let contentInfo = try reader.single(in: 0..<reader.bytes.count, depth: 1, what: "the receipt")
        try expect(contentInfo, .sequence, constructed: true, in: reader, what: "ContentInfo")
        let parts = try reader.children(of: contentInfo, countMax: 2, excess: .badTag, what: "ContentInfo")
        guard let contentType = parts.first else {
            throw reader.error(.notSignedData, "empty ContentInfo", at: contentInfo.offset)
        }
        try expectOID(contentType, signedDataOID, in: reader, what: "ContentInfo content type (not signedData)")
        guard parts.count == 2 else {
            throw reader.error(.missingPayload, "ContentInfo without content", at: contentInfo.offset)
        }
        try expect(parts[1], .contextSpecific(0), constructed: true, in: reader, what: "ContentInfo content")
        let explicitContent = try reader.children(
            of: parts[1], countMax: 1, excess: .badTag, what: "ContentInfo content")
        guard let signedData = explicitContent.first else {
            throw reader.error(.missingPayload, "empty ContentInfo content", at: parts[1].offset)
        }
        try expect(signedData, .sequence, constructed: true, in: reader, what: "SignedData")
        let encapsulated = try encapsulatedContentInfo(of: signedData, in: reader)
        return try eContent(of: encapsulated, in: reader)
    }

    /// SignedData's fields in order; returns encapContentInfo.
    private static func encapsulatedContentInfo(
        of signedData: BERElement, in reader: BERReader
    ) throws(AppReceiptError) -> BERElement {
        let fields = try reader.children(
            of: signedData, countMax: AppReceiptLimits.signedDataFieldsMax, excess: .badTag, what: "SignedData")
        guard fields.count >= 4 else {
            throw reader.error(.badTag, "SignedData with \(fields.count) of its 4 to 6 fields", at: signedData.offset)
        }
        try expect(fields[0], .integer, constructed: false, in: reader, what: "SignedData version")
        try expect(fields[1], .set, constructed: true, in: reader, what: "SignedData digestAlgorithms")
        try expect(fields[2], .sequence, constructed: true, in: reader, what: "SignedData encapContentInfo")
        // certificates [0] and crls [1], each optional, in that order.
        var nextOptionalTag: UInt32 = 0
        for field in fields[3..<(fields.count - 1)] {
            guard field.tag.tagClass == .contextSpecific, field.tag.number >= nextOptionalTag, field.tag.number <= 1,
                field.isConstructed
            else { throw reader.error(.badTag, "SignedData field \(field.tag) out of place", at: field.offset) }
            nextOptionalTag = field.tag.number + 1
        }
        try expect(fields[fields.count - 1], .set, constructed: true, in: reader, what: "SignedData signerInfos")
        return fields[2]
    }

    /// encapContentInfo: `id-data`, then `[0] EXPLICIT OCTET STRING`.
    private static func eContent(of encapsulated: BERElement, in reader: BERReader) throws(AppReceiptError) -> Payload {
        let parts = try reader.children(of: encapsulated, countMax: 2, excess: .badTag, what: "encapContentInfo")
        guard let contentType = parts.first else {
            throw reader.error(.notSignedData, "empty encapContentInfo", at: encapsulated.offset)
        }
        try expectOID(contentType, dataOID, in: reader, what: "encapsulated content type (not data)")
        guard parts.count == 2 else {
            throw reader.error(.missingPayload, "no encapsulated content (detached signature)", at: encapsulated.offset)
        }
        try expect(parts[1], .contextSpecific(0), constructed: true, in: reader, what: "eContent")
        let explicitContent = try reader.children(of: parts[1], countMax: 1, excess: .badTag, what: "eContent")
        guard let octetString = explicitContent.first else {
            throw reader.error(.missingPayload, "empty eContent", at: parts[1].offset)
        }
        try expect(octetString, .octetString, constructed: nil, in: reader, what: "eContent")
        guard octetString.isConstructed else {
            return Payload(reader: reader, range: octetString.content, depth: octetString.depth + 1)
        }
        let joined = try reader.stringBytes(
            of: octetString, bytesMax: reader.bytes.count, tooLong: .tooLarge, what: "eContent")
        return Payload(
            reader: reader.nestedReader(for: octetString, bytes: joined), range: 0..<joined.count,
            depth: octetString.depth + 1)
    }

    /// `element` has `tag`, and is constructed or primitive as required
    /// (either when `constructed` is nil).
    static func expect(
        _ element: BERElement, _ tag: BERTag, constructed: Bool?, in reader: BERReader, what: String
    ) throws(AppReceiptError) {
        guard element.tag == tag, constructed == nil || element.isConstructed == constructed else {
            let form = element.isConstructed ? "constructed" : "primitive"
            throw reader.error(.badTag, "\(what) is a \(form) \(element.tag), not \(tag)", at: element.offset)
        }
    }

    private static func expectOID(
        _ element: BERElement, _ oid: [UInt8], in reader: BERReader, what: String
    ) throws(AppReceiptError) {
        try expect(element, .objectIdentifier, constructed: false, in: reader, what: what)
        guard reader.bytes[element.content].elementsEqual(oid) else {
            throw reader.error(.notSignedData, what, at: element.offset)
        }
    }
}
