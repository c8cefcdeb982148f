/// Reads the receipt payload: a SET of `ReceiptAttribute ::= SEQUENCE {
/// type INTEGER, version INTEGER, value OCTET STRING }`, each value holding
/// one DER-encoded element (see `ReceiptAttributeType`). Every attribute is
/// checked for that shape, known or not; the fields this reader uses are
/// checked for their ASN.1 type, their limits and their characters.
enum ReceiptPayloadReader {
    static func receipt(in payload: SignedDataReader.Payload) throws(AppReceiptError) -> AppReceipt {
        let reader = payload.reader
        let set = try reader.single(in: payload.range, depth: payload.depth, what: "the receipt payload")
        try SignedDataReader.expect(set, .set, constructed: true, in: reader, what: "the receipt payload")
        let attributes = try reader.children(
            of: set, countMax: AppReceiptLimits.payloadAttributesMax, excess: .tooMany, what: "the receipt payload")
        var bundleId: String?
        var appVersion: String?
        var seenAppVersion = false
        var creationDate: AppReceiptDate?
        var seenCreationDate = false
        var purchases: [AppReceiptInAppPurchase] = []
        for element in attributes {
            let attribute = try ReceiptAttribute(element, in: reader)
            switch attribute.type {
            case ReceiptAttributeType.bundleId:
                guard bundleId == nil else { throw attribute.fault(.duplicateField, "bundle id (type 2) twice") }
                bundleId = try attribute.text(
                    .identifier, bytesMax: AppReceiptLimits.textBytesMax, what: "bundle id (type 2)")
                guard bundleId != nil else { throw attribute.fault(.badField, "empty bundle id (type 2)") }
            case ReceiptAttributeType.appVersion:
                guard !seenAppVersion else { throw attribute.fault(.duplicateField, "app version (type 3) twice") }
                seenAppVersion = true
                appVersion = try attribute.text(
                    .freeText, bytesMax: AppReceiptLimits.textBytesMax, what: "app version (type 3)")
            case ReceiptAttributeType.creationDate:
                guard !seenCreationDate else { throw attribute.fault(.duplicateField, "creation date (type 12) twice") }
                seenCreationDate = true
                creationDate = try attribute.date(what: "creation date (type 12)")
            case ReceiptAttributeType.inAppPurchase:
                guard purchases.count < AppReceiptLimits.inAppPurchasesMax else {
                    throw attribute.fault(.tooMany, "more than \(AppReceiptLimits.inAppPurchasesMax) in-app purchases")
                }
                purchases.append(try inAppPurchase(attribute, number: purchases.count + 1))
            default:
                continue  // Reserved for Apple: ignored, as the documentation requires.
            }
        }
        guard let bundleId else { throw reader.error(.missingField, "no bundle id (type 2)", at: set.offset) }
        return AppReceipt(
            bundleId: bundleId, appVersion: appVersion, creationDate: creationDate, inAppPurchases: purchases)
    }

    /// One in-app purchase receipt: type 17's value, a SET of attributes.
    private static func inAppPurchase(
        _ outer: ReceiptAttribute, number: Int
    ) throws(AppReceiptError) -> AppReceiptInAppPurchase {
        let name = "in-app purchase \(number)"
        let (reader, set) = try outer.valueElement()
        try SignedDataReader.expect(set, .set, constructed: true, in: reader, what: name)
        let elements = try reader.children(
            of: set, countMax: AppReceiptLimits.inAppAttributesMax, excess: .tooMany, what: name)
        var fields = InAppFields()
        for element in elements {
            let attribute = try ReceiptAttribute(element, in: reader)
            guard ReceiptAttributeType.inAppFields.contains(attribute.type) else { continue }
            let what = "field \(attribute.type) of \(name)"
            guard fields.seen.insert(attribute.type).inserted else {
                throw attribute.fault(.duplicateField, "\(what) twice")
            }
            switch attribute.type {
            case ReceiptAttributeType.quantity:
                fields.quantity = try attribute.quantity(what: what)
            case ReceiptAttributeType.productId:
                fields.productId = try attribute.text(.identifier, bytesMax: AppReceiptLimits.textBytesMax, what: what)
            case ReceiptAttributeType.transactionId:
                fields.transactionId = try attribute.text(
                    .identifier, bytesMax: AppReceiptLimits.transactionIdBytesMax, what: what)
                guard fields.transactionId != nil else { throw attribute.fault(.badField, "empty \(what)") }
            case ReceiptAttributeType.originalTransactionId:
                fields.originalTransactionId = try attribute.text(
                    .identifier, bytesMax: AppReceiptLimits.transactionIdBytesMax, what: what)
            case ReceiptAttributeType.purchaseDate:
                fields.purchaseDate = try attribute.date(what: what)
            default:
                fields.cancellationDate = try attribute.date(what: what)
            }
        }
        guard let transactionId = fields.transactionId else {
            throw reader.error(.missingField, "no transaction id (1703) in \(name)", at: set.offset)
        }
        return AppReceiptInAppPurchase(
            transactionId: transactionId, originalTransactionId: fields.originalTransactionId,
            productId: fields.productId, quantity: fields.quantity, purchaseDate: fields.purchaseDate,
            cancellationDate: fields.cancellationDate)
    }

    private struct InAppFields {
        var seen = Set<Int64>()
        var transactionId: String?
        var originalTransactionId: String?
        var productId: String?
        var quantity: Int?
        var purchaseDate: AppReceiptDate?
        var cancellationDate: AppReceiptDate?
    }
}
