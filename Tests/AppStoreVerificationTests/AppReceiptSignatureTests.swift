import AppStoreVerification
import CryptoPrimitives
import Foundation
import TestSupport
import XCTest

/// `AppReceiptSignatureVerifier` on a receipt Apple really signed
/// (Fixtures/README-receipt.md) and on receipts signed by throw-away
/// Apple-shaped CAs with `openssl cms`.
final class AppReceiptSignatureTests: XCTestCase {
    /// The real receipt's creation date (type 12): 2018-08-22T09:47:33Z.
    static let realCreatedAt: Int64 = 1_534_931_253
    static let nowSeconds = Int64(Date().timeIntervalSince1970)

    static func realReceipt() throws -> [UInt8] {
        try StrictBase64.decodeStandard(FixtureSupport.fixtureText("receipt_sandbox_2018.b64").utf8)
    }

    /// The 2023 receipt (G7 intermediate) and its creation date: 2023-02-22T14:30:15Z.
    static let receipt2023CreatedAt: Int64 = 1_677_076_215

    static func receipt2023() throws -> [UInt8] {
        try StrictBase64.decodeStandard(FixtureSupport.fixtureText("receipt_sandbox_2023.b64").utf8)
    }

    static func configRoot(_ name: String) throws -> Data {
        try Data(
            contentsOf: FixtureSupport.repositoryRoot.appendingPathComponent("config").appendingPathComponent(name))
    }

    static let appleIncRoot = "AppleIncRootCertificate.cer"

    static func at(_ seconds: Int64) -> AppStoreTimestamp { AppStoreTimestamp(millisecondsSince1970: seconds * 1000) }

    private func assertRefused(
        _ expected: String, _ verifier: AppReceiptSignatureVerifier, _ receipt: [UInt8], at seconds: Int64,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            try verifier.verify(receipt: receipt, createdAt: Self.at(seconds))
            XCTFail("expected \(expected), the receipt verified", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, expected, "\(error)", file: file, line: line)
        }
    }

    /// `receipt` with one bit flipped at each of `offsets`, one at a time, is `signatureInvalid`.
    private func assertEachAlteredByteRefused(
        _ receipt: [UInt8], at offsets: [Int], _ verifier: AppReceiptSignatureVerifier,
        createdAt: Int64, file: StaticString = #filePath, line: UInt = #line
    ) {
        for offset in offsets {
            var altered = receipt
            altered[offset] ^= 0x01
            assertRefused("signatureInvalid", verifier, altered, at: createdAt, file: file, line: line)
        }
    }

    // MARK: Apple's receipt

    func testTheShippedRootIsApplesPublishedAppleIncRoot() throws {
        let der = try Self.configRoot(Self.appleIncRoot)
        XCTAssertEqual(
            SHA256.hash(Array(der)).map { String(format: "%02x", $0) }.joined(),
            "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024")
    }

    func testApplesReceiptVerifiesUnderAppleIncRootAtItsCreationDate() throws {
        let receipt = try Self.realReceipt()
        let appleInc = try AppReceiptSignatureVerifier(trustedRootsDER: [Self.configRoot(Self.appleIncRoot)])
        XCTAssertNoThrow(try appleInc.verify(receipt: receipt, createdAt: Self.at(Self.realCreatedAt)))
        // The shipped default: Apple Inc. Root and G3.
        let both = try AppReceiptSignatureVerifier(trustedRootsDER: [
            Self.configRoot(Self.appleIncRoot), Self.configRoot("AppleRootCA-G3.cer"),
        ])
        XCTAssertNoThrow(try both.verify(receipt: receipt, createdAt: Self.at(Self.realCreatedAt)))
    }

    func testApplesReceiptIsRefusedNowUnderG3AloneAndAltered() throws {
        let receipt = try Self.realReceipt()
        let appleInc = try AppReceiptSignatureVerifier(trustedRootsDER: [Self.configRoot(Self.appleIncRoot)])
        // Its chain expired on 2023-02-07: checked now, it is not trusted.
        assertRefused("chainUntrusted", appleInc, receipt, at: Self.nowSeconds)
        // The root it carries is never trusted for being carried.
        let g3 = try AppReceiptSignatureVerifier(trustedRootsDER: [FixtureSupport.appleRootDER()])
        assertRefused("chainUntrusted", g3, receipt, at: Self.realCreatedAt)
        // One byte of the bundle id, of the transaction id, of the signature.
        assertEachAlteredByteRefused(
            receipt, at: [259, 778, receipt.count - 10], appleInc, createdAt: Self.realCreatedAt)
        assertRefused("signatureInvalid", appleInc, Array(receipt.prefix(2_000)), at: Self.realCreatedAt)
        // The genuine receipt with bytes after it is not one ContentInfo.
        assertRefused("signatureInvalid", appleInc, receipt + [0x00, 0x00], at: Self.realCreatedAt)
        assertRefused("signatureInvalid", appleInc, [], at: Self.realCreatedAt)
        assertRefused("signatureInvalid", appleInc, Array("not a receipt".utf8), at: Self.realCreatedAt)
    }

    func testApplesReceiptUnderTheG7IntermediateVerifiesOnlyWithinItsChainsLife() throws {
        // The chain Apple moved receipts to in 2023 (README-receipt.md):
        // a new intermediate generation, the same markers and root.
        let receipt = try Self.receipt2023()
        let shipped = try AppReceiptSignatureVerifier(trustedRootsDER: [
            Self.configRoot(Self.appleIncRoot), Self.configRoot("AppleRootCA-G3.cer"),
        ])
        XCTAssertNoThrow(try shipped.verify(receipt: receipt, createdAt: Self.at(Self.receipt2023CreatedAt)))
        // Now (the chain expired on 2023-11-17), and before its leaf was issued (2022-12-02).
        assertRefused("chainUntrusted", shipped, receipt, at: Self.nowSeconds)
        assertRefused("chainUntrusted", shipped, receipt, at: 1_669_852_800)
        let g3 = try AppReceiptSignatureVerifier(trustedRootsDER: [FixtureSupport.appleRootDER()])
        assertRefused("chainUntrusted", g3, receipt, at: Self.receipt2023CreatedAt)
        // A byte of the bundle id, of a transaction id, of the signature.
        assertEachAlteredByteRefused(
            receipt, at: [410, 775, receipt.count - 10], shipped, createdAt: Self.receipt2023CreatedAt)
    }

    func testNoRootsIsAConfigurationError() {
        XCTAssertThrowsError(try AppReceiptSignatureVerifier(trustedRootsDER: [])) {
            XCTAssertEqual($0 as? ConfigurationError, .noTrustedRoots)
        }
        XCTAssertThrowsError(try AppReceiptSignatureVerifier(trustedRootsDER: [Data([0x30, 0x03, 0x02, 0x01, 0x01])])) {
            XCTAssertEqual($0 as? ConfigurationError, .invalidTrustedRoot(index: 0))
        }
    }

    // MARK: Apple-shaped test CAs

    private func signed(
        by authority: LocalTestingCertificateAuthority, carryingIntermediate: Bool = true,
        _ mode: OpenSSLCMSSigner.Mode = .cms,
        digest: String = "sha256"
    ) throws -> [UInt8] {
        let signer = try OpenSSLCMSSigner(
            appleShapedAuthorityPEM: authority.exportPEM(), carryingIntermediate: carryingIntermediate)
        defer { signer.removeFiles() }
        return try signer.sign(Array("a receipt payload".utf8), mode, digest: digest)
    }

    private func authority(_ configure: (inout LocalTestingCertificateAuthority.Options) -> Void = { _ in }) throws
        -> LocalTestingCertificateAuthority
    {
        var options = LocalTestingCertificateAuthority.Options(nowSeconds: Self.nowSeconds)
        configure(&options)
        return try LocalTestingCertificateAuthority(options: options)
    }

    func testAReceiptSignedByTheTrustedChainVerifiesInDERBERAndPKCS7() throws {
        let authority = try authority()
        let verifier = try AppReceiptSignatureVerifier(trustedRootsDER: [authority.rootDER])
        XCTAssertNoThrow(try verifier.verify(receipt: signed(by: authority), createdAt: Self.at(Self.nowSeconds)))
        XCTAssertNoThrow(
            try verifier.verify(receipt: signed(by: authority, .cmsStreamed), createdAt: Self.at(Self.nowSeconds)))
        XCTAssertNoThrow(
            try verifier.verify(receipt: signed(by: authority, .smime), createdAt: Self.at(Self.nowSeconds)))
        // A detached signature signs no receipt content.
        assertRefused("signatureInvalid", verifier, try signed(by: authority, .cmsDetached), at: Self.nowSeconds)
        // Outside the chain's validity at the receipt's creation date.
        assertRefused("chainUntrusted", verifier, try signed(by: authority), at: Self.nowSeconds - 2 * 86_400)
        // The intermediate must come with the receipt: the roots alone do not reach the leaf.
        assertRefused(
            "chainUntrusted", verifier, try signed(by: authority, carryingIntermediate: false), at: Self.nowSeconds)
    }

    func testOnlyTheDigestsAppleSignsReceiptsWithAreAccepted() throws {
        // The App Store has signed receipts with SHA-1 and SHA-256 only; a
        // valid signature under any other digest is refused, not trusted
        // because the signer named it.
        let authority = try authority()
        let verifier = try AppReceiptSignatureVerifier(trustedRootsDER: [authority.rootDER])
        XCTAssertNoThrow(
            try verifier.verify(receipt: signed(by: authority, digest: "sha1"), createdAt: Self.at(Self.nowSeconds)))
        XCTAssertNoThrow(
            try verifier.verify(receipt: signed(by: authority, digest: "sha256"), createdAt: Self.at(Self.nowSeconds)))
        for digest in ["sha384", "sha512"] {
            assertRefused("signatureInvalid", verifier, try signed(by: authority, digest: digest), at: Self.nowSeconds)
        }
    }

    func testASecondSignerIsRefused() throws {
        // A genuine receipt has exactly one signer, the App Store; a
        // SignerInfo beside it, even one whose signature is good, leaves no
        // single chain to judge the receipt by.
        let authority = try authority()
        let verifier = try AppReceiptSignatureVerifier(trustedRootsDER: [authority.rootDER])
        let signer = try OpenSSLCMSSigner(appleShapedAuthorityPEM: authority.exportPEM())
        let stranger = try OpenSSLCMSSigner.selfSigned()
        defer { signer.removeFiles(); stranger.removeFiles() }
        let payload = Array("a receipt payload".utf8)
        XCTAssertNoThrow(try verifier.verify(receipt: signer.sign(payload), createdAt: Self.at(Self.nowSeconds)))
        assertRefused("signatureInvalid", verifier, try signer.sign(payload, cosigner: stranger), at: Self.nowSeconds)
        assertRefused("signatureInvalid", verifier, try stranger.sign(payload, cosigner: signer), at: Self.nowSeconds)
    }

    func testAChainWithoutApplesMarkersIsNotAReceiptSigner() throws {
        // A developer's own certificate chains to an Apple root too: the
        // markers say the chain is the App Store's receipt signing.
        for configure: (inout LocalTestingCertificateAuthority.Options) -> Void in [
            { $0.leafOID = .omitted }, { $0.leafOID = .wrong }, { $0.intermediateOID = .omitted },
            { $0.intermediateOID = .wrong },
        ] {
            let authority = try authority(configure)
            let verifier = try AppReceiptSignatureVerifier(trustedRootsDER: [authority.rootDER])
            assertRefused("notReceiptSigner", verifier, try signed(by: authority), at: Self.nowSeconds)
        }
    }

    func testASignerUnderAnotherRootOrSelfSignedIsUntrusted() throws {
        let trusted = try authority()
        let verifier = try AppReceiptSignatureVerifier(trustedRootsDER: [
            trusted.rootDER, Self.configRoot(Self.appleIncRoot),
        ])
        assertRefused("chainUntrusted", verifier, try signed(by: authority()), at: Self.nowSeconds)
        let stranger = try OpenSSLCMSSigner.selfSigned()
        defer { stranger.removeFiles() }
        assertRefused(
            "chainUntrusted", verifier, try stranger.sign(Array("a receipt payload".utf8)), at: Self.nowSeconds)
    }
}
