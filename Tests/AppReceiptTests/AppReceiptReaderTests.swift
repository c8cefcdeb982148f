import AppReceipt
import TestSupport
import XCTest

/// Receipts that must be read: signed by OpenSSL (DER, streamed BER, S/MIME)
/// and hand-written in every BER form, with 0, 1 and several purchases.
final class AppReceiptReaderTests: XCTestCase {
    private static let signer = Result { try OpenSSLCMSSigner.selfSigned() }

    override class func tearDown() {
        try? signer.get().removeFiles()
        super.tearDown()
    }
    private var signer: OpenSSLCMSSigner { get throws { try Self.signer.get() } }
    private let reader = AppReceiptReader()

    private func read(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> AppReceipt {
        // Through base64, as the app sends it.
        try reader.read(base64: Data(bytes).base64EncodedString())
    }

    func testOpenSSLSignedReceiptWithoutPurchases() throws {
        let receipt = try read(try signer.sign(TestReceipt().payload().encoded()))
        XCTAssertEqual(receipt.bundleId, "com.example.receipts")
        XCTAssertEqual(receipt.appVersion, "1.0.3")
        XCTAssertEqual(receipt.creationDate?.millisecondsSince1970, 1_697_678_334_000)
        XCTAssertEqual(receipt.inAppPurchases, [])
        XCTAssertEqual(receipt.transactionIds, [])
        XCTAssertEqual(receipt.originalTransactionIds, [])
    }

    /// A receipt the App Store really signed, from AppStoreVerificationTests' Fixtures.
    private func readApplesReceipt(_ name: String) throws -> AppReceipt {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AppStoreVerificationTests/Fixtures").appendingPathComponent(name)
        return try reader.read(
            base64: try String(contentsOf: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The receipt the App Store really signed (AppStoreVerificationTests'
    /// Fixtures/README-receipt.md).
    func testApplesSandboxReceipt() throws {
        let receipt = try readApplesReceipt("receipt_sandbox_2018.b64")
        XCTAssertEqual(receipt.bundleId, "com.tyria.wan")
        XCTAssertEqual(receipt.appVersion, "1.0.0.1")
        XCTAssertEqual(receipt.creationDate?.text, "2018-08-22T09:47:33Z")
        XCTAssertEqual(receipt.creationDate?.millisecondsSince1970, 1_534_931_253_000)
        XCTAssertEqual(receipt.inAppPurchases.map(\.productId), ["xxyw_6"])
        XCTAssertEqual(receipt.transactionIds, ["1000000434104409"])
    }

    /// The receipt Apple's sandbox signed in 2023 under the G7 intermediate
    /// (AppStoreVerificationTests' Fixtures/README-receipt.md).
    func testApplesSandboxReceiptOf2023() throws {
        let receipt = try readApplesReceipt("receipt_sandbox_2023.b64")
        XCTAssertEqual(receipt.bundleId, "com.hannesoid.PurchasingExperiments")
        XCTAssertEqual(receipt.appVersion, "1")
        XCTAssertEqual(receipt.creationDate?.text, "2023-02-22T14:30:15Z")
        XCTAssertEqual(receipt.creationDate?.millisecondsSince1970, 1_677_076_215_000)
        XCTAssertEqual(
            Set(receipt.inAppPurchases.map(\.productId)),
            [
                "com.hannesoid.PurchasingExperiments.oneTime", "com.hannesoid.PurchasingExperiments.subscription1",
            ])
        XCTAssertEqual(Set(receipt.transactionIds), ["2000000284164152", "2000000284164527"])
    }

    func testAReceiptWithoutACreationDateReadsWithoutOne() throws {
        var undated = TestReceipt()
        undated.creationDate = nil
        XCTAssertNil(try read(try signer.sign(undated.payload().encoded())).creationDate)
    }

    func testOpenSSLSignedReceiptWithOnePurchase() throws {
        var purchase = TestReceipt.Purchase(
            transactionId: "2000000123456789", originalTransactionId: "2000000123456700")
        purchase.productId = "com.example.credits.500"
        purchase.quantity = 3
        purchase.purchaseDate = "2023-10-19T01:18:54Z"
        let receipt = try read(try signer.sign(TestReceipt(purchases: [purchase]).payload().encoded()))
        XCTAssertEqual(
            receipt.inAppPurchases,
            [
                AppReceiptInAppPurchase(
                    transactionId: "2000000123456789", originalTransactionId: "2000000123456700",
                    productId: "com.example.credits.500", quantity: 3,
                    purchaseDate: AppReceiptDate(text: "2023-10-19T01:18:54Z"))
            ])
        XCTAssertEqual(receipt.inAppPurchases[0].purchaseDate?.millisecondsSince1970, 1_697_678_334_000)
        XCTAssertNil(receipt.inAppPurchases[0].cancellationDate)
        XCTAssertEqual(receipt.transactionIds, ["2000000123456789"])
        XCTAssertEqual(receipt.originalTransactionIds, ["2000000123456700"])
    }

    /// Duplicates stay in `inAppPurchases` (they are the receipt's content)
    /// and appear once in `transactionIds`, in order of first appearance.
    func testSeveralPurchasesWithDuplicatesKeepTheirOrder() throws {
        var purchases = ["30", "10", "30", "20", "10", "40"].map { TestReceipt.Purchase(transactionId: $0) }
        purchases[1].originalTransactionId = "5"
        purchases[3].originalTransactionId = "5"
        purchases[5].cancellationDate = "2024-02-29T23:59:59.999Z"
        let payload = TestReceipt(purchases: purchases).payload().encoded()
        for mode in [OpenSSLCMSSigner.Mode.cms, .cmsStreamed, .smime] {
            let receipt = try read(try signer.sign(payload, mode))
            XCTAssertEqual(
                receipt.inAppPurchases.map(\.transactionId), ["30", "10", "30", "20", "10", "40"], "\(mode)")
            XCTAssertEqual(receipt.transactionIds, ["30", "10", "20", "40"], "\(mode)")
            XCTAssertEqual(receipt.originalTransactionIds, ["30", "5", "10", "40"], "\(mode)")
            XCTAssertEqual(
                receipt.inAppPurchases[5].cancellationDate?.millisecondsSince1970, 1_709_251_199_999, "\(mode)")
        }
    }

    /// `openssl cms -stream` writes BER with indefinite lengths, as Xcode does.
    func testOpenSSLStreamedBERIsReadLikeDER() throws {
        let payload = TestReceipt(transactionIds: ["1", "2", "3"]).payload().encoded()
        let streamed = try signer.sign(payload, .cmsStreamed)
        XCTAssertEqual(Array(streamed.prefix(2)), [0x30, 0x80], "expected an indefinite-length ContentInfo")
        let der = try signer.sign(payload, .cms)
        XCTAssertNotEqual(der[1], 0x80)
        XCTAssertEqual(try read(streamed), try read(der))
        XCTAssertEqual(try read(streamed).transactionIds, ["1", "2", "3"])
    }

    /// The same receipt in DER and in each BER liberty (indefinite lengths
    /// everywhere, the payload and every value split into segments, nested
    /// segments, long-form lengths) reads the same.
    func testEveryBEREncodingReadsLikeDER() throws {
        var purchases = (1...4).map { TestReceipt.Purchase(transactionId: "100000000000\($0)") }
        purchases[2].cancellationDate = "2021-04-16T10:59:33+0800"
        let receipt = TestReceipt(purchases: purchases)
        let expected = try read(receipt.signedData(.der))
        XCTAssertEqual(expected.transactionIds, (1...4).map { "100000000000\($0)" })
        XCTAssertEqual(expected.inAppPurchases[2].cancellationDate?.millisecondsSince1970, 1_618_541_973_000)
        let styles: [BERStyle] = [
            .xcode, .everyLiberty, BERStyle(indefiniteLengths: true), BERStyle(octetStringSegmentBytes: 1),
            BERStyle(octetStringSegmentBytes: 5, nestedSegments: true), BERStyle(longFormLengths: true),
        ]
        for style in styles {
            let bytes = receipt.signedData(style)
            XCTAssertNotEqual(bytes, receipt.signedData(.der))
            XCTAssertEqual(try read(bytes), expected, "\(style)")
        }
    }

    /// What Xcode's StoreKit testing writes: no original transaction id,
    /// empty strings for fields that do not apply, a year-4001 expiry.
    func testXcodeShapedPurchase() throws {
        var purchase = TestReceipt.Purchase(transactionId: "0")
        purchase.originalTransactionId = nil
        purchase.cancellationDate = ""
        purchase.productId = "com.example.c"
        var receipt = TestReceipt(purchases: [purchase])
        receipt.appVersion = "1"
        receipt.extraAttributes = [attribute(21, .ia5("4001-01-01T00:00:00Z"))]
        let read = try read(receipt.signedData(.xcode))
        XCTAssertEqual(read.appVersion, "1")
        XCTAssertEqual(
            read.inAppPurchases,
            [
                AppReceiptInAppPurchase(
                    transactionId: "0", productId: "com.example.c", quantity: 1,
                    purchaseDate: AppReceiptDate(text: "2023-10-19T01:18:54Z"))
            ])
        XCTAssertEqual(read.originalTransactionIds, [])
    }

    func testOptionalFieldsMayBeAbsentOrEmpty() throws {
        var purchase = TestReceipt.Purchase(transactionId: "7")
        purchase.productId = ""
        purchase.quantity = nil
        purchase.purchaseDate = nil
        purchase.originalTransactionId = ""
        var receipt = TestReceipt(purchases: [purchase])
        receipt.appVersion = nil
        let read = try read(receipt.signedData())
        XCTAssertNil(read.appVersion)
        XCTAssertEqual(read.inAppPurchases, [AppReceiptInAppPurchase(transactionId: "7")])
    }

    /// Types the reader does not use are ignored, whatever their value holds,
    /// as Apple's documentation requires; so are negative and large types.
    func testUnknownAttributesAreIgnored() throws {
        var purchase = TestReceipt.Purchase(transactionId: "9")
        purchase.extraAttributes = [
            attribute(1706, .ia5("not a date")), attribute(1799, .raw([0xFF, 0xFF])), attribute(-1, .null),
            .sequence([.integer(Int64.max), .integer(Int64.min), .octets([])]),
        ]
        var receipt = TestReceipt(purchases: [purchase])
        receipt.extraAttributes = [attribute(99, .raw([])), attribute(18, .sequence([.integer(1)]))]
        XCTAssertEqual(try read(receipt.signedData()).transactionIds, ["9"])
    }

    /// BER lets a string be split too: a constructed UTF8String of OCTET STRING segments.
    func testSplitStringsAreJoined() throws {
        var purchase = TestReceipt.Purchase(transactionId: nil)
        purchase.extraAttributes = [
            attribute(
                1703,
                .constructed(
                    tag: 0x2C, children: [.octets(Array("20000".utf8)), .octets([]), .octets(Array("00042".utf8))]))
        ]
        XCTAssertEqual(try read(TestReceipt(purchases: [purchase]).signedData(.xcode)).transactionIds, ["2000000042"])
    }

    func testAppVersionMayBeAnyUTF8WithoutControls() throws {
        var receipt = TestReceipt()
        receipt.appVersion = "2.0 (bêta 3) 版本"
        XCTAssertEqual(try read(receipt.signedData()).appVersion, "2.0 (bêta 3) 版本")
    }

    func testDates() {
        let cases: [(String, Int64?)] = [
            ("2023-10-19T01:18:54Z", 1_697_678_334_000),
            ("2021-04-16T10:59:33+0800", 1_618_541_973_000),
            ("2021-04-16T10:59:33+08:00", 1_618_541_973_000),
            ("4001-01-01T00:00:00Z", 64_092_211_200_000),
            ("2024-02-29T23:59:59.999Z", 1_709_251_199_999),
            ("2023-10-19T01:18:54.5-05:30", 1_697_698_134_500),
            ("1969-12-31t23:59:59z", -1_000),
            ("2023-10-19T01:18:54.123456789Z", 1_697_678_334_123),
            ("2023-02-29T00:00:00Z", nil), ("2023-13-01T00:00:00Z", nil), ("2023-10-19T24:00:00Z", nil),
            ("2023-10-19 01:18:54Z", nil), ("2023-10-19T01:18:54", nil), ("2023-10-19T01:18:54.Z", nil),
            ("2023-10-19T01:18:54.1234567890Z", nil), ("2023-10-19T01:18:54+08", nil),
            ("2023-10-19T01:18:54Zjunk", nil),
            ("1697678334000", nil), ("", nil),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(AppReceiptDate(text: text).millisecondsSince1970, expected, text)
            XCTAssertEqual(AppReceiptDate(text: text).text, text)
        }
    }

    /// At the limits exactly, everything is still read.
    func testLimitsAreInclusive() throws {
        var purchase = TestReceipt.Purchase(
            transactionId: String(repeating: "9", count: AppReceiptLimits.transactionIdBytesMax))
        purchase.productId = String(repeating: "p", count: AppReceiptLimits.textBytesMax)
        purchase.extraAttributes = (0..<(AppReceiptLimits.inAppAttributesMax - 8)).map {
            attribute(5000 + Int64($0), .null)
        }
        XCTAssertEqual(purchase.attributes(.der).count, AppReceiptLimits.inAppAttributesMax)
        var receipt = TestReceipt(purchases: [purchase])
        receipt.bundleId = String(repeating: "b", count: AppReceiptLimits.textBytesMax)
        XCTAssertEqual(try read(receipt.signedData()).transactionIds, [purchase.transactionId!])

        let many = TestReceipt(transactionIds: (0..<AppReceiptLimits.inAppPurchasesMax).map { "\($0)" })
        XCTAssertEqual(try read(many.signedData()).transactionIds.count, AppReceiptLimits.inAppPurchasesMax)
    }

    func testReadBytesAndBase64Agree() throws {
        let bytes = TestReceipt(transactionIds: ["1"]).signedData(.xcode)
        XCTAssertEqual(try reader.read(bytes: bytes), try read(bytes))
    }
}
