/// A receipt payload as Apple lays it out (Receipt Fields): a SET of
/// `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, each
/// value the DER (or, for coverage, BER) encoding of the field's own type.
struct TestReceipt {
    struct Purchase {
        var transactionId: String?
        var originalTransactionId: String?
        var productId: String? = "com.example.credits.100"
        var quantity: Int64? = 1
        var purchaseDate: String? = "2023-10-19T01:18:54Z"
        var cancellationDate: String?
        /// Further attributes, written after the fields above.
        var extraAttributes: [ASN1] = []

        init(transactionId: String?, originalTransactionId: String? = nil) {
            self.transactionId = transactionId
            self.originalTransactionId = originalTransactionId ?? transactionId
        }

        func attributes(_ style: BERStyle) -> [ASN1] {
            var attributes: [ASN1] = [
                // Fields Apple writes that the reader ignores: web order line item id, expiry, offer type.
                attribute(1711, .integer(0), style),
                attribute(1708, .ia5(""), style),
                attribute(1719, .integer(0), style),
            ]
            if let quantity { attributes.append(attribute(1701, .integer(quantity), style)) }
            if let productId { attributes.append(attribute(1702, .utf8(productId), style)) }
            if let transactionId { attributes.append(attribute(1703, .utf8(transactionId), style)) }
            if let purchaseDate { attributes.append(attribute(1704, .ia5(purchaseDate), style)) }
            if let originalTransactionId { attributes.append(attribute(1705, .utf8(originalTransactionId), style)) }
            if let cancellationDate { attributes.append(attribute(1712, .ia5(cancellationDate), style)) }
            return attributes + extraAttributes
        }
    }

    var bundleId: String? = "com.example.receipts"
    var appVersion: String? = "1.0.3"
    /// Type 12, the receipt's creation date (nil: not written).
    var creationDate: String? = "2023-10-19T01:18:54Z"
    var purchases: [Purchase] = []
    /// Further top-level attributes, written last.
    var extraAttributes: [ASN1] = []

    init(purchases: [Purchase] = []) { self.purchases = purchases }

    /// Purchases with these transaction ids and the default fields.
    init(transactionIds: [String]) { self.purchases = transactionIds.map { Purchase(transactionId: $0) } }

    /// The payload SET.
    func payload(_ style: BERStyle = .der) -> ASN1 {
        var attributes: [ASN1] = [
            // Fields the reader ignores: environment, opaque value, SHA-1, original version.
            attribute(0, .utf8("ProductionSandbox"), style),
            attribute(4, .octets([0xD1, 0xBC, 0xFE, 0xCF, 0x04, 0x00, 0x00, 0x00]), style),
            attribute(5, .octets([UInt8](repeating: 0xA5, count: 20)), style),
            attribute(19, .utf8("1.0"), style),
        ]
        if let creationDate { attributes.append(attribute(12, .ia5(creationDate), style)) }
        if let bundleId { attributes.append(attribute(2, .utf8(bundleId), style)) }
        if let appVersion { attributes.append(attribute(3, .utf8(appVersion), style)) }
        for purchase in purchases {
            attributes.append(attribute(17, .set(purchase.attributes(style)), style))
        }
        return .set(attributes + extraAttributes)
    }

    /// A hand-made PKCS #7 SignedData around the payload, written in
    /// `style` (the payload too): structurally what Apple sends, with a
    /// stand-in certificate and signer info (the reader checks neither).
    func signedData(_ style: BERStyle = .der) -> [UInt8] {
        Self.contentInfo(eContent: .octets(payload(style).encoded(style))).encoded(style)
    }

    /// ContentInfo { signedData, [0] SignedData { 1, {sha256}, { data, [0] eContent }, [0] certs, {signerInfo} } }.
    static func contentInfo(
        contentType: [UInt8] = ASN1.signedDataOID, eContentType: [UInt8] = ASN1.dataOID, eContent: ASN1?
    ) -> ASN1 {
        let digestAlgorithm = ASN1.sequence([.oid(ASN1.sha256OID), .null])
        let encapsulated = ASN1.sequence([.oid(eContentType)] + (eContent.map { [.context(0, [$0])] } ?? []))
        let certificate = ASN1.sequence([.sequence([.context(0, [.integer(2)]), .integer(1)]), digestAlgorithm])
        let signerInfo = ASN1.sequence([.integer(1), .sequence([.integer(1)]), digestAlgorithm, .octets([0x5A, 0x5A])])
        let signedData = ASN1.sequence([
            .integer(1), .set([digestAlgorithm]), encapsulated, .context(0, [certificate]), .set([signerInfo]),
        ])
        return .sequence([.oid(contentType), .context(0, [signedData])])
    }
}

/// `SEQUENCE { type, version 1, OCTET STRING (value's encoding) }`.
func attribute(_ type: Int64, _ value: ASN1, _ style: BERStyle = .der) -> ASN1 {
    .sequence([.integer(type), .integer(1), .octets(value.encoded(style))])
}
