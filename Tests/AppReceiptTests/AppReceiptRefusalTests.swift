import AppReceipt
import Foundation
import TestSupport
import XCTest

/// Receipts that must be refused, each with its own stable code.
final class AppReceiptRefusalTests: XCTestCase {
    private let reader = AppReceiptReader()

    private func assertRefused(
        _ bytes: [UInt8], _ code: AppReceiptError.Code, _ message: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) {
        assertRefused(base64: Data(bytes).base64EncodedString(), code, message, file: file, line: line)
    }

    private func assertRefused(
        base64 text: String, _ code: AppReceiptError.Code, _ message: String = "",
        reader: AppReceiptReader = AppReceiptReader(), file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let receipt = try reader.read(base64: text)
            XCTFail("read \(receipt), expected \(code) \(message)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, code, "\(error) \(message)", file: file, line: line)
        }
    }

    /// A receipt whose one purchase has these attributes and no other field
    /// the reader uses but its transaction id (when `keepId`).
    private func purchase(with attributes: [ASN1], keepId: Bool = true) -> [UInt8] {
        var purchase = TestReceipt.Purchase(transactionId: keepId ? "1" : nil)
        purchase.originalTransactionId = nil
        purchase.productId = nil
        purchase.quantity = nil
        purchase.purchaseDate = nil
        purchase.extraAttributes = attributes
        return TestReceipt(purchases: [purchase]).signedData()
    }

    // MARK: Base64

    func testGarbageBase64() {
        let valid = Data(TestReceipt().signedData()).base64EncodedString()
        let cases = [
            "abc", "ab=c", "a===", "====", "MIAG CSqG", "MIAGCSqG\n", " MIAGCSqG", "MIAGCSqG\r\n",
            "MIAG-CSq", "MIAG_CSq", "MIAGCSqG=", "MIAGCS==qG", "QR==", "QUI=QUI=", "Zm9v!", "\u{0}AAA", "ÀAAA",
            String(valid.dropLast()), valid + "=", valid + "\n",
            // Base64 with line breaks every 64 characters (an app using .lineLength64Characters).
            stride(from: 0, to: valid.count, by: 64).map {
                String(valid.dropFirst($0).prefix(64))
            }.joined(separator: "\r\n"),
        ]
        for text in cases { assertRefused(base64: text, .notBase64, text.debugDescription) }
    }

    func testEmptyReceiptIsTruncated() {
        assertRefused(base64: "", .truncated)
    }

    /// A StoreKit 2 JWS where a StoreKit 1 receipt is expected.
    func testJWSIsNotAReceipt() {
        let jws =
            "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlCIl19.eyJ0cmFuc2FjdGlvbklkIjoiMjAwMDAwMDEyMzQ1Njc4OSJ9.c2lnbmF0dXJl"
        assertRefused(base64: jws, .notBase64)
        // Its header alone happens to be base64: JSON's '{' is no SEQUENCE.
        assertRefused(base64: "eyJhbGciOiJFUzI1NiJ9", .badTag)
        assertRefused(Array(#"{"receiptData":"MIAG"}"#.utf8), .badTag)
        assertRefused(Array("-----BEGIN PKCS7-----\nMIAG\n-----END PKCS7-----\n".utf8), .badTag)
    }

    // MARK: The container

    func testOtherContainersAreNotSignedData() {
        let payload = TestReceipt().payload().encoded()
        // The bare payload (a SET), id-data and envelopedData ContentInfos, a certificate-like SEQUENCE.
        assertRefused(payload, .badTag)
        assertRefused(
            TestReceipt.contentInfo(contentType: ASN1.dataOID, eContent: .octets(payload)).encoded(), .notSignedData)
        var enveloped = ASN1.signedDataOID
        enveloped[enveloped.count - 1] = 3
        assertRefused(
            TestReceipt.contentInfo(contentType: enveloped, eContent: .octets(payload)).encoded(), .notSignedData)
        assertRefused(
            TestReceipt.contentInfo(eContentType: ASN1.signedDataOID, eContent: .octets(payload)).encoded(),
            .notSignedData)
        assertRefused(ASN1.sequence([.sequence([.integer(1)]), .sequence([])]).encoded(), .badTag)
        assertRefused(ASN1.sequence([]).encoded(), .notSignedData)
    }

    func testDetachedSignatureHasNoPayload() throws {
        assertRefused(TestReceipt.contentInfo(eContent: nil).encoded(), .missingPayload)
        assertRefused(ASN1.sequence([.oid(ASN1.signedDataOID)]).encoded(), .missingPayload)
        let signer = try OpenSSLCMSSigner.selfSigned()
        assertRefused(try signer.sign(TestReceipt().payload().encoded(), .cmsDetached), .missingPayload)
    }

    func testMisshapenSignedData() {
        let encapsulated = ASN1.sequence([
            .oid(ASN1.dataOID), .context(0, [.octets(TestReceipt().payload().encoded())]),
        ])
        let digest = ASN1.set([])
        func container(_ fields: [ASN1]) -> [UInt8] {
            ASN1.sequence([.oid(ASN1.signedDataOID), .context(0, [.sequence(fields)])]).encoded()
        }
        XCTAssertNoThrow(
            try reader.read(bytes: container([.integer(1), digest, encapsulated, .set([])])), "the fewest fields")
        assertRefused(container([.integer(1), digest, encapsulated]), .badTag, "no signerInfos")
        assertRefused(container([digest, .integer(1), encapsulated, .set([])]), .badTag, "fields swapped")
        assertRefused(
            container([.integer(1), digest, encapsulated, .context(1, []), .context(0, []), .set([])]), .badTag,
            "crls before certificates")
        assertRefused(
            container([.integer(1), digest, encapsulated, .context(2, []), .set([])]), .badTag, "unknown field")
        assertRefused(container(Array(repeating: .set([]), count: 7)), .badTag, "too many fields")
        assertRefused(
            ASN1.sequence([.oid(ASN1.signedDataOID), .context(0, [.sequence([]), .sequence([])])]).encoded(), .badTag)
        assertRefused(ASN1.sequence([.oid(ASN1.signedDataOID), .context(1, [])]).encoded(), .badTag)
        // eContent wrapped in something other than OCTET STRING, or empty.
        let wrongContent = ASN1.sequence([.oid(ASN1.dataOID), .context(0, [.utf8("x")])])
        assertRefused(container([.integer(1), digest, wrongContent, .set([])]), .badTag)
        let emptyContent = ASN1.sequence([.oid(ASN1.dataOID), .context(0, [])])
        assertRefused(container([.integer(1), digest, emptyContent, .set([])]), .missingPayload)
    }

    func testTrailingData() {
        assertRefused(TestReceipt().signedData() + [0x00], .trailingData)
        assertRefused(TestReceipt().signedData(.xcode) + [0x30, 0x00], .trailingData)
        // Bytes after the payload SET inside eContent.
        let eContent = ASN1.octets(TestReceipt().payload().encoded() + [0x05, 0x00])
        assertRefused(TestReceipt.contentInfo(eContent: eContent).encoded(), .trailingData)
    }

    // MARK: Lengths, tags, depth, size

    func testHugeDeclaredLengths() {
        assertRefused([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x06, 0x00], .lengthOverflow)
        assertRefused([0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF], .lengthOverflow)
        assertRefused([0x30, 0x85, 0x00, 0x00, 0x00, 0x00, 0x02, 0x05, 0x00], .lengthOverflow)
        assertRefused([0x30, 0x88] + [UInt8](repeating: 0xFF, count: 8), .lengthOverflow)
        assertRefused([0x30, 0xFE] + [UInt8](repeating: 0xFF, count: 126), .lengthOverflow)
        // Within the receipt's size but past its end: truncated.
        assertRefused([0x30, 0x82, 0x00, 0x06, 0x06, 0x00], .truncated)
        // A huge length deep inside: the transaction id's value.
        let hugeValue = ASN1.sequence([
            .integer(1703), .integer(1), .raw([0x04, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x0C, 0x01, 0x31]),
        ])
        var purchase = TestReceipt.Purchase(transactionId: "1")
        purchase.extraAttributes = [hugeValue]
        assertRefused(TestReceipt(purchases: [purchase]).signedData(), .lengthOverflow)
    }

    func testForbiddenLengths() {
        assertRefused([0x30, 0x80, 0x02, 0x80, 0x00, 0x00, 0x00, 0x00], .badLength, "indefinite primitive")
        assertRefused([0x30, 0xFF, 0x00], .badLength, "reserved 0xFF")
        assertRefused([0x30, 0x80, 0x00, 0x01, 0x00, 0x00, 0x00], .badLength, "end-of-contents with content")
        assertRefused([0x30, 0x03, 0x00, 0x00, 0x00], .badTag, "end-of-contents in definite content")
        assertRefused([0x00, 0x00], .badTag, "end-of-contents alone")
        assertRefused([0x30, 0x80, 0x06, 0x01, 0x00], .truncated, "no end-of-contents")
        assertRefused([0x30, 0x80, 0x06, 0x01, 0x00, 0x00], .truncated, "half an end-of-contents")
    }

    func testMalformedTags() {
        assertRefused([0x30, 0x04, 0x3F, 0x80, 0x01, 0x00], .badTag, "high tag number with a leading zero digit")
        assertRefused([0x30, 0x03, 0x3F, 0x1E, 0x00], .badTag, "tag 30 in the long form")
        assertRefused([0x30, 0x07, 0x3F, 0x81, 0x81, 0x81, 0x81, 0x01, 0x00], .badTag, "tag number of 5 digits")
        assertRefused([0x30, 0x80, 0x3F, 0x81, 0x81, 0x81, 0x81, 0x01, 0x00, 0x00, 0x00], .badTag, "the same, walked")
        assertRefused([0x30, 0x02, 0x3F, 0x81], .truncated, "tag ends early")
        assertRefused([0x30, 0x04, 0x1F, 0x81, 0x01, 0x00], .badTag, "[UNIVERSAL 129] is no content type")
        assertRefused([0x31, 0x00], .badTag, "SET for ContentInfo")
        assertRefused([0x10, 0x00], .badTag, "primitive SEQUENCE")
        assertRefused([0x3F, 0x81, 0x01, 0x00], .badTag, "high tag number first")
        // The payload as a SEQUENCE, not a SET.
        let payload = ASN1.sequence([attribute(2, .utf8("com.example"))]).encoded()
        assertRefused(TestReceipt.contentInfo(eContent: .octets(payload)).encoded(), .badTag)
        // A split eContent whose segment is not an OCTET STRING.
        let badSegment = ASN1.constructed(tag: 0x24, children: [.octets([0x31]), .utf8("x")])
        assertRefused(TestReceipt.contentInfo(eContent: badSegment).encoded(), .badTag)
    }

    func testDeepNesting() {
        for depth in [AppReceiptLimits.depthMax + 1, 10_000, 100_000] {
            let indefinite = Array([[UInt8]](repeating: [0x30, 0x80], count: depth).joined())
            assertRefused(indefinite + [UInt8](repeating: 0, count: depth * 2), .tooDeep, "indefinite \(depth)")
        }
        // A split eContent nested past the limit.
        var segments = ASN1.octets(TestReceipt().payload().encoded())
        for _ in 0..<AppReceiptLimits.depthMax { segments = .constructed(tag: 0x24, children: [segments]) }
        assertRefused(TestReceipt.contentInfo(eContent: segments).encoded(), .tooDeep)
        // Deep inside a field's value, with indefinite lengths: walked to find its end.
        var value = ASN1.set([])
        for _ in 0..<AppReceiptLimits.depthMax { value = .set([value]) }
        assertRefused(
            purchase(with: [attribute(1703, value, BERStyle(indefiniteLengths: true))], keepId: false), .tooDeep)
        // Definite lengths are not walked: the reader only descends where it
        // reads, and refuses the first element of the wrong shape.
        // (Built level by level: the recursive test encoder would exhaust the stack.)
        var definite: [UInt8] = [0x30, 0x00]
        for _ in 0..<2_000 { definite = ASN1.primitive(tag: 0x30, content: definite).encoded() }
        assertRefused(definite, .badTag)
        assertRefused(purchase(with: [attribute(1703, value)], keepId: false), .badField)
    }

    func testTooLarge() {
        let small = AppReceiptReader(receiptBytesMax: 100)
        let receipt = TestReceipt(transactionIds: ["1"]).signedData()
        XCTAssertGreaterThan(receipt.count, 100)
        assertRefused(base64: Data(receipt).base64EncodedString(), .tooLarge, reader: small)
        XCTAssertThrowsError(try small.read(bytes: receipt)) {
            XCTAssertEqual(($0 as? AppReceiptError)?.code, .tooLarge)
        }
        // The text is refused by its length alone, before it is decoded.
        let limit = AppReceiptLimits.base64BytesMax(receiptBytes: AppReceiptLimits.receiptBytesMaxDefault)
        assertRefused(base64: String(repeating: "A", count: limit + 4), .tooLarge)
        assertRefused(base64: String(repeating: "!", count: limit + 1), .tooLarge)
        assertRefused(
            base64: String(repeating: "A", count: limit), .tooLarge, "its last quad would decode past the limit")
        assertRefused(base64: String(repeating: "A", count: limit - 4), .badTag, "within the limit the text is decoded")
        XCTAssertEqual(AppReceiptLimits.base64BytesMax(receiptBytes: 3), 4)
        XCTAssertEqual(AppReceiptLimits.base64BytesMax(receiptBytes: 4), 8)
    }

    func testTooMany() {
        let purchases = TestReceipt(transactionIds: (0...AppReceiptLimits.inAppPurchasesMax).map { "\($0)" })
        assertRefused(purchases.signedData(), .tooMany, "in-app purchases")
        var attributes = TestReceipt()
        attributes.extraAttributes = (0..<AppReceiptLimits.payloadAttributesMax).map {
            attribute(10_000 + Int64($0), .null)
        }
        assertRefused(attributes.signedData(), .tooMany, "payload attributes")
        let fields = (0..<AppReceiptLimits.inAppAttributesMax).map { attribute(5_000 + Int64($0), .null) }
        assertRefused(purchase(with: fields), .tooMany, "in-app attributes")
    }

    // MARK: Attributes and fields

    func testMisshapenAttributes() {
        let cases: [(ASN1, String)] = [
            (.set([.integer(1703), .integer(1), .octets([])]), "SET, not SEQUENCE"),
            (.sequence([.integer(1703), .integer(1)]), "two fields"),
            (.sequence([.integer(1703), .integer(1), .octets([]), .octets([])]), "four fields"),
            (.sequence([.utf8("1703"), .integer(1), .octets([])]), "type not INTEGER"),
            (.sequence([.integer(1703), .null, .octets([])]), "version not INTEGER"),
            (.sequence([.integer(1703), .integer(1), .utf8("1")]), "value not OCTET STRING"),
            (.sequence([.raw([0x02, 0x00]), .integer(1), .octets([])]), "empty INTEGER"),
            (.sequence([.raw([0x02, 0x02, 0x00, 0x01]), .integer(1), .octets([])]), "non-minimal INTEGER"),
            (.sequence([.raw([0x02, 0x02, 0xFF, 0x80]), .integer(1), .octets([])]), "non-minimal negative INTEGER"),
            (
                .sequence([.raw([0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]), .integer(1), .octets([])]),
                "9-byte INTEGER"
            ),
            (
                .sequence([.constructed(tag: 0x22, children: [.integer(1)]), .integer(1), .octets([])]),
                "constructed INTEGER"
            ),
        ]
        for (attribute, name) in cases {
            assertRefused(purchase(with: [attribute]), .badAttribute, name)
            var receipt = TestReceipt()
            receipt.extraAttributes = [attribute]
            assertRefused(receipt.signedData(), .badAttribute, "top level: \(name)")
        }
    }

    func testFieldsOfTheWrongType() {
        let cases: [(ASN1, String)] = [
            (attribute(1703, .integer(2_000_000_123)), "transaction id as INTEGER"),
            (attribute(1703, .ia5("1")), "transaction id as IA5String"),
            (attribute(1705, .octets(Array("1".utf8))), "original transaction id as OCTET STRING"),
            (attribute(1701, .utf8("1")), "quantity as UTF8String"),
            (attribute(1701, .integer(-1)), "negative quantity"),
            (attribute(1701, .integer(Int64(Int32.max) + 1)), "quantity past Int32"),
            (attribute(1701, .raw([0x02, 0x02, 0x00, 0x01])), "non-minimal quantity"),
            (attribute(1704, .utf8("2023-10-19T01:18:54Z")), "purchase date as UTF8String"),
            (attribute(1712, .ia5("2023-10-19\u{7}")), "date with a control character"),
            (attribute(1712, .raw([0x16, 0x02, 0xC3, 0xA9])), "date not ASCII"),
        ]
        for (attribute, name) in cases {
            let keepId = !name.hasPrefix("transaction id")
            assertRefused(purchase(with: [attribute], keepId: keepId), .badField, name)
        }
        // A value without an element, or with bytes after it.
        assertRefused(purchase(with: [attribute(1702, .raw([]))]), .truncated)
        assertRefused(
            purchase(with: [.sequence([.integer(1702), .integer(1), .octets([0x0C, 0x01, 0x41, 0x00])])]), .trailingData
        )
    }

    func testIdentifiersArePrintableASCII() {
        for bad in ["1 2", "12\n", "\u{0}1", "١٢", "12\u{7F}", "é"] {
            assertRefused(purchase(with: [attribute(1703, .utf8(bad))], keepId: false), .badField, bad.debugDescription)
            var receipt = TestReceipt()
            receipt.bundleId = "com.example" + bad
            assertRefused(receipt.signedData(), .badField, "bundle id \(bad.debugDescription)")
        }
        assertRefused(purchase(with: [attribute(1703, .utf8(""))], keepId: false), .badField, "empty transaction id")
        var emptyBundle = TestReceipt()
        emptyBundle.bundleId = ""
        assertRefused(emptyBundle.signedData(), .badField, "empty bundle id")
        var invalidVersion = TestReceipt()
        invalidVersion.appVersion = nil
        invalidVersion.extraAttributes = [attribute(3, .raw([0x0C, 0x02, 0xC3, 0x28]))]
        assertRefused(invalidVersion.signedData(), .badField, "app version not UTF-8")
        for control in ["1.0\u{0}", "1.0\n", "\u{85}1.0", "1.0\u{1B}[31m"] {
            var receipt = TestReceipt()
            receipt.appVersion = control
            assertRefused(receipt.signedData(), .badField, control.debugDescription)
        }
    }

    func testFieldsTooLong() {
        let longId = String(repeating: "1", count: AppReceiptLimits.transactionIdBytesMax + 1)
        assertRefused(purchase(with: [attribute(1703, .utf8(longId))], keepId: false), .fieldTooLong)
        let longOriginal = TestReceipt.Purchase(transactionId: "1", originalTransactionId: longId)
        assertRefused(TestReceipt(purchases: [longOriginal]).signedData(), .fieldTooLong)
        var longProduct = TestReceipt.Purchase(transactionId: "1")
        longProduct.productId = String(repeating: "p", count: AppReceiptLimits.textBytesMax + 1)
        assertRefused(TestReceipt(purchases: [longProduct]).signedData(), .fieldTooLong)
        var receipt = TestReceipt()
        receipt.bundleId = String(repeating: "b", count: AppReceiptLimits.textBytesMax + 1)
        assertRefused(receipt.signedData(), .fieldTooLong)
        let longDate = String(repeating: "2", count: AppReceiptLimits.dateBytesMax + 1)
        assertRefused(purchase(with: [attribute(1712, .ia5(longDate))]), .fieldTooLong)
        // A UTF8String split into segments: the limit counts the joined bytes.
        let split = ASN1.constructed(
            tag: 0x2C, children: [.octets(Array(longId.utf8.prefix(40))), .octets(Array(longId.utf8.dropFirst(40)))])
        assertRefused(purchase(with: [attribute(1703, split)], keepId: false), .fieldTooLong)
    }

    func testDuplicateAndMissingFields() {
        assertRefused(purchase(with: [attribute(1703, .utf8("2"))]), .duplicateField, "two transaction ids")
        assertRefused(
            purchase(with: [attribute(1701, .integer(2)), attribute(1701, .integer(2))]), .duplicateField,
            "two quantities")
        assertRefused(
            purchase(with: [attribute(1712, .ia5("")), attribute(1712, .ia5(""))]), .duplicateField,
            "two empty cancellations")
        var twoBundles = TestReceipt()
        twoBundles.extraAttributes = [attribute(2, .utf8("com.example.other"))]
        assertRefused(twoBundles.signedData(), .duplicateField)
        var twoVersions = TestReceipt()
        twoVersions.extraAttributes = [attribute(3, .utf8(""))]
        assertRefused(twoVersions.signedData(), .duplicateField)
        // The creation date is when the signature's chain is checked: one only.
        var twoCreationDates = TestReceipt()
        twoCreationDates.creationDate = ""
        twoCreationDates.extraAttributes = [attribute(12, .ia5("2023-10-19T01:18:54Z"))]
        assertRefused(twoCreationDates.signedData(), .duplicateField)
        var creationDateOfTheWrongType = TestReceipt()
        creationDateOfTheWrongType.creationDate = nil
        creationDateOfTheWrongType.extraAttributes = [attribute(12, .utf8("2023-10-19T01:18:54Z"))]
        assertRefused(creationDateOfTheWrongType.signedData(), .badField)
        var noBundle = TestReceipt(transactionIds: ["1"])
        noBundle.bundleId = nil
        assertRefused(noBundle.signedData(), .missingField)
        assertRefused(purchase(with: [], keepId: false), .missingField, "in-app purchase without 1703")
        // Type 17's value must be a SET.
        var notSet = TestReceipt()
        notSet.extraAttributes = [attribute(17, .sequence([attribute(1703, .utf8("1"))]))]
        assertRefused(notSet.signedData(), .badTag)
    }

    func testErrorsDescribeWithoutContent() {
        let secret = "com.example.secret-bundle\u{7}"
        var receipt = TestReceipt()
        receipt.bundleId = secret
        do {
            _ = try reader.read(bytes: receipt.signedData())
            XCTFail("read a control character")
        } catch {
            XCTAssertEqual(error.code, .badField)
            XCTAssertFalse(error.description.contains("secret"), error.description)
            XCTAssertTrue(error.description.hasPrefix("badField: bundle id (type 2)"), error.description)
            XCTAssertGreaterThan(error.byteOffset, 0)
        }
    }
}
