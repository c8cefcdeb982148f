import CryptoPrimitives
import Foundation
import XCTest
@testable import AppStoreVerification

/// Every failure mode on a generated Apple-shaped PKI.
final class GeneratedPKITests: XCTestCase {
    private typealias PKI = TestPKI

    func testValidTransactionDecodesEveryField() throws {
        let authority = try PKI.authority()
        let extra =
            ",\"appAccountToken\":\"7E3FB20B-4CDB-47CC-936D-99D65F608138\",\"price\":990000,"
            + "\"currency\":\"USD\",\"storefront\":\"USA\",\"storefrontId\":\"143441\",\"transactionReason\":\"PURCHASE\","
            + "\"revocationDate\":1780000001000.0,\"revocationReason\":1,\"isUpgraded\":false,\"offerType\":2,"
            + "\"offerIdentifier\":\"promo\",\"offerDiscountType\":\"PAY_AS_YOU_GO\",\"webOrderLineItemId\":\"42\","
            + "\"appTransactionId\":\"704\",\"unknownFutureField\":{\"nested\":[1,2,3]}"
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON(extra: extra))
        let transaction = try PKI.verifier(trusting: authority).verifyTransaction(jws)
        XCTAssertEqual(transaction.transactionId, "2000000000000001")
        XCTAssertEqual(transaction.productId, "points_100")
        XCTAssertEqual(transaction.type, .consumable)
        XCTAssertEqual(transaction.inAppOwnershipType, .purchased)
        XCTAssertEqual(transaction.quantity, 1)
        XCTAssertEqual(transaction.price, 990_000)
        XCTAssertEqual(transaction.appAccountToken, UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        XCTAssertEqual(transaction.revocationDate?.millisecondsSince1970, 1_780_000_001_000)
        XCTAssertEqual(transaction.revocationReason, 1)
        XCTAssertEqual(transaction.offerType, 2)
        XCTAssertEqual(transaction.isUpgraded, false)
        XCTAssertEqual(transaction.storefrontId, "143441")
        XCTAssertEqual(transaction.appTransactionId, "704")
        XCTAssertEqual(transaction.signedDate?.millisecondsSince1970, PKI.nowMilliseconds)
        XCTAssertTrue(transaction.payloadJSON.contains("unknownFutureField"))
    }

    func testFractionalMillisecondTimestampsAreAccepted() throws {
        let authority = try PKI.authority()
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON(signedDate: "\(PKI.nowMilliseconds).0"))
        let transaction = try PKI.verifier(trusting: authority).verifyTransaction(jws)
        XCTAssertEqual(transaction.signedDate?.millisecondsSince1970, PKI.nowMilliseconds)
        let exponent = try authority.sign(payloadJSON: PKI.transactionJSON(signedDate: "1.78e12"))
        XCTAssertEqual(
            try PKI.verifier(trusting: authority).verifyTransaction(exponent).signedDate?.millisecondsSince1970,
            1_780_000_000_000)
    }

    func testNonIntegralTimestampIsInvalidPayload() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON(signedDate: "\(PKI.nowMilliseconds).5"))
        assertFailureCode("invalid_payload") { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
    }

    func testNumbersInStringsAreInvalidPayload() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let quotedDate = try authority.sign(payloadJSON: PKI.transactionJSON(signedDate: "\"\(PKI.nowMilliseconds)\""))
        assertFailureCode("invalid_payload") { () throws(VerificationFailure) in
            try verifier.verifyTransaction(quotedDate)
        }
        let quotedPrice = try authority.sign(payloadJSON: PKI.transactionJSON(extra: ",\"price\":\"990000\""))
        assertFailureCode("invalid_payload") { () throws(VerificationFailure) in
            try verifier.verifyTransaction(quotedPrice)
        }
        let quotedQuantity = try authority.sign(
            payloadJSON: PKI.transactionJSON(extra: ",\"quantity\":\"1\"")
                .replacingOccurrences(of: "\"quantity\":1,", with: ""))
        assertFailureCode("invalid_payload") { () throws(VerificationFailure) in
            try verifier.verifyTransaction(quotedQuantity)
        }
    }

    func testDuplicateKeysAreRefused() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let payload = try authority.sign(payloadJSON: PKI.transactionJSON(extra: ",\"bundleId\":\"com.evil\""))
        assertFailureCode("invalid_payload") { () throws(VerificationFailure) in try verifier.verifyTransaction(payload)
        }
        let header = String(authority.standardHeaderJSON.dropLast()) + ",\"alg\":\"none\"}"
        let duplicateHeader = try authority.sign(headerJSON: header, payloadJSON: PKI.transactionJSON())
        assertFailureCode("malformed") { () throws(VerificationFailure) in
            try verifier.verifyTransaction(duplicateHeader)
        }
    }

    func testNonUTF8IsMalformed() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        var payload = Array(PKI.transactionJSON().utf8)
        payload.insert(0xFF, at: 20)
        let badPayload = try authority.sign(
            headerBytes: Array(authority.standardHeaderJSON.utf8), payloadBytes: payload)
        assertFailureCode("malformed") { () throws(VerificationFailure) in try verifier.verifyTransaction(badPayload) }
        var header = Array(authority.standardHeaderJSON.utf8)
        header.insert(0xC0, at: 3)
        let badHeader = try authority.sign(headerBytes: header, payloadBytes: Array(PKI.transactionJSON().utf8))
        assertFailureCode("malformed") { () throws(VerificationFailure) in try verifier.verifyTransaction(badHeader) }
    }

    func testPayloadMustBeAJSONObject() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        for payload in ["[1,2]", "\"text\"", "42", "{\"a\":1,}", "{\"a\":1} x"] {
            let jws = try authority.sign(payloadJSON: payload)
            assertFailureCode("invalid_payload") { () throws(VerificationFailure) in try verifier.verifyTransaction(jws)
            }
        }
    }

    func testUnsupportedAlgorithms() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let chain = authority.certificateChainBase64.map { "\"\($0)\"" }.joined(separator: ",")
        for (header, algorithm) in [
            ("{\"alg\":\"none\",\"x5c\":[\(chain)]}", "none"),
            ("{\"alg\":\"HS256\",\"x5c\":[\(chain)]}", "HS256"),
            ("{\"alg\":\"ES384\",\"x5c\":[\(chain)]}", "ES384"),
            ("{\"x5c\":[\(chain)]}", "(missing)"),
        ] {
            let jws = try authority.sign(headerJSON: header, payloadJSON: PKI.transactionJSON())
            assertFailure(.unsupportedAlgorithm(algorithm)) { () throws(VerificationFailure) in
                try verifier.verifyTransaction(jws)
            }
        }
        // An unsigned token ("alg":"none" with an empty signature) is refused too.
        let unsigned =
            StrictBase64.encodeURL(Array("{\"alg\":\"none\"}".utf8)) + "."
            + StrictBase64.encodeURL(Array(PKI.transactionJSON().utf8)) + "."
        assertFailure(.unsupportedAlgorithm("none")) { () throws(VerificationFailure) in
            try verifier.verifyTransaction(unsigned)
        }
    }

    func testChainLengths() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let chain = authority.certificateChainBase64.map { "\"\($0)\"" }
        let cases: [([String], VerificationFailure)] = [
            (Array(chain.prefix(2)), .wrongChainLength(count: 2)),
            (chain + [chain[2]], .wrongChainLength(count: 4)),
            ([chain[0]], .wrongChainLength(count: 1)),
            ([], .missingCertificateChain),
        ]
        for (entries, expected) in cases {
            let header = "{\"alg\":\"ES256\",\"x5c\":[\(entries.joined(separator: ","))]}"
            let jws = try authority.sign(headerJSON: header, payloadJSON: PKI.transactionJSON())
            assertFailure(expected) { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
        }
        let numbers = try authority.sign(
            headerJSON: "{\"alg\":\"ES256\",\"x5c\":[1,2,3]}", payloadJSON: PKI.transactionJSON())
        assertFailureCode("bad_certificate") { () throws(VerificationFailure) in try verifier.verifyTransaction(numbers)
        }
        let object = try authority.sign(
            headerJSON: "{\"alg\":\"ES256\",\"x5c\":{}}", payloadJSON: PKI.transactionJSON())
        assertFailureCode("malformed") { () throws(VerificationFailure) in try verifier.verifyTransaction(object) }
        let noChain = try authority.sign(headerJSON: "{\"alg\":\"ES256\"}", payloadJSON: PKI.transactionJSON())
        assertFailure(.missingCertificateChain) { () throws(VerificationFailure) in
            try verifier.verifyTransaction(noChain)
        }
    }

    func testBadCertificateEncodings() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        var chain = authority.certificateChainBase64
        let cases = [
            chain[0].replacingOccurrences(of: "=", with: ""),  // unpadded (if padded) or altered
            "!!" + chain[0],  // stray characters
            StrictBase64.encodeStandard(Array("not a certificate".utf8)),
            StrictBase64.encodeStandard(Array(authority.leafDER.dropLast(10))),  // truncated DER
            StrictBase64.encodeStandard(Array(authority.leafDER) + [0]),  // trailing garbage
        ]
        for leaf in cases where leaf != chain[0] {
            chain[0] = leaf
            let header = "{\"alg\":\"ES256\",\"x5c\":[\(chain.map { "\"\($0)\"" }.joined(separator: ","))]}"
            let jws = try authority.sign(headerJSON: header, payloadJSON: PKI.transactionJSON())
            assertFailureCode("bad_certificate") { () throws(VerificationFailure) in try verifier.verifyTransaction(jws)
            }
        }
    }

    func testMarkerOIDs() throws {
        let cases: [((inout LocalTestingCertificateAuthority.Options) -> Void, VerificationFailure)] = [
            ({ $0.leafOID = .omitted }, .wrongOID(.leaf)),
            ({ $0.leafOID = .wrong }, .wrongOID(.leaf)),
            ({ $0.intermediateOID = .omitted }, .wrongOID(.intermediate)),
            ({ $0.intermediateOID = .wrong }, .wrongOID(.intermediate)),
        ]
        for (configure, expected) in cases {
            let authority = try PKI.authority(configure)
            let verifier = try PKI.verifier(trusting: authority)
            let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
            assertFailure(expected) { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
        }
    }

    func testExpiredLeafAtSignedDate() throws {
        let authority = try PKI.authority {
            $0.leafValidFromSeconds = PKI.nowSeconds - 86_400
            $0.leafValidUntilSeconds = PKI.nowSeconds - 3_600
        }
        let verifier = try PKI.verifier(trusting: authority)
        let late = try authority.sign(payloadJSON: PKI.transactionJSON())
        assertFailure(.expired) { () throws(VerificationFailure) in try verifier.verifyTransaction(late) }
        // Signed while the leaf was valid: the effective date is signedDate, so it passes.
        let early = try authority.sign(
            payloadJSON: PKI.transactionJSON(signedDate: String((PKI.nowSeconds - 7_200) * 1000)))
        XCTAssertNoThrow(try verifier.verifyTransaction(early))
        // Not yet valid.
        let tooEarly = try authority.sign(
            payloadJSON: PKI.transactionJSON(signedDate: String((PKI.nowSeconds - 90_000) * 1000)))
        assertFailure(.expired) { () throws(VerificationFailure) in try verifier.verifyTransaction(tooEarly) }
    }

    func testExpiredIntermediateIsExpired() throws {
        // Whole chain valid only until an hour ago; the leaf is overridden to stay valid.
        let authority = try PKI.authority {
            $0.validUntilSeconds = PKI.nowSeconds - 3_600
            $0.leafValidFromSeconds = PKI.nowSeconds - 86_400
            $0.leafValidUntilSeconds = PKI.nowSeconds + 86_400
        }
        let verifier = try PKI.verifier(trusting: authority)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        assertFailure(.expired) { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
    }

    func testWrongRootIsBadChain() throws {
        let signer = try PKI.authority()
        let other = try PKI.authority()
        let verifier = try PKI.verifier(trusting: other)
        let jws = try signer.sign(payloadJSON: PKI.transactionJSON())
        assertFailureCode("bad_chain") { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
    }

    func testForeignRootInX5CIsIgnored() throws {
        // The JWS carries another root in x5c[2]; only the configured root counts.
        let signer = try PKI.authority()
        let other = try PKI.authority()
        var chain = signer.certificateChainBase64
        chain[2] = other.certificateChainBase64[2]
        let header = "{\"alg\":\"ES256\",\"x5c\":[\(chain.map { "\"\($0)\"" }.joined(separator: ","))]}"
        let jws = try signer.sign(headerJSON: header, payloadJSON: PKI.transactionJSON())
        XCTAssertNoThrow(try PKI.verifier(trusting: signer).verifyTransaction(jws))
        let otherVerifier = try PKI.verifier(trusting: other)
        assertFailureCode("bad_chain") { () throws(VerificationFailure) in try otherVerifier.verifyTransaction(jws) }
    }

    func testWrongSigningKeyIsBadSignature() throws {
        let authority = try PKI.authority { $0.signWithWrongKey = true }
        let verifier = try PKI.verifier(trusting: authority)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        assertFailure(.badSignature) { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
    }

    func testTamperedPayloadIsBadSignature() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        let forged = TestPKI.replacingPart(
            jws, index: 1, with: StrictBase64.encodeURL(Array(PKI.transactionJSON(extra: ",\"price\":1").utf8)))
        assertFailure(.badSignature) { () throws(VerificationFailure) in try verifier.verifyTransaction(forged) }
        let shortSignature = TestPKI.replacingPart(
            jws, index: 2, with: StrictBase64.encodeURL([UInt8](repeating: 1, count: 63)))
        assertFailure(.badSignature) { () throws(VerificationFailure) in try verifier.verifyTransaction(shortSignature)
        }
        let zeroSignature = TestPKI.replacingPart(
            jws, index: 2, with: StrictBase64.encodeURL([UInt8](repeating: 0, count: 64)))
        assertFailure(.badSignature) { () throws(VerificationFailure) in try verifier.verifyTransaction(zeroSignature) }
    }

    func testLeafKeyMustBeP256AndP384RootIsFine() throws {
        // ES256 cannot be made with a P-384 key: sign with a P-256 stranger;
        // the leaf key check comes first.
        let p384Leaf = try PKI.authority {
            $0.leafCurve = "P-384"
            $0.signWithWrongKey = true
        }
        let jws = try p384Leaf.sign(payloadJSON: PKI.transactionJSON())
        let verifier = try PKI.verifier(trusting: p384Leaf)
        assertFailureCode("bad_certificate") { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
        let p384Root = try PKI.authority { $0.rootCurve = "P-384" }
        XCTAssertNoThrow(
            try PKI.verifier(trusting: p384Root).verifyTransaction(p384Root.sign(payloadJSON: PKI.transactionJSON())))
    }

    func testMissingKeyIdentifiersAreTolerated() throws {
        let authority = try PKI.authority { $0.includeKeyIdentifiers = false }
        XCTAssertNoThrow(
            try PKI.verifier(trusting: authority).verifyTransaction(authority.sign(payloadJSON: PKI.transactionJSON())))
    }

    func testBase64URLStrictness() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        let parts = jws.split(separator: ".").map(String.init)
        let variants = [
            parts[0] + "=." + parts[1] + "." + parts[2],  // padding
            parts[0] + "." + parts[1] + "." + parts[2] + "==",  // padding on signature
            parts[0] + "." + parts[1].replacingOccurrences(of: "-", with: "+") + "x." + parts[2],  // standard alphabet
            parts[0] + ". " + parts[1] + "." + parts[2],  // whitespace
            parts[0] + "." + parts[1] + "\n." + parts[2],  // newline
            parts[0] + "." + parts[1] + "." + parts[2] + "AAA",  // 1 mod 4 length
            jws + ".",  // 4 parts
            "." + jws,
            parts[0] + "." + parts[1] + "." + String(parts[2].dropLast()) + "_",  // non-zero trailing bits
        ]
        for variant in variants where variant != jws {
            assertFailureCode("malformed") { () throws(VerificationFailure) in try verifier.verifyTransaction(variant) }
        }
    }

    func testOversizedJWSIsRefusedBeforeParsing() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let huge = String(repeating: "A", count: VerificationLimits.jwsLengthBytesMax + 1)
        assertFailure(.payloadTooLarge(lengthBytes: huge.utf8.count)) { () throws(VerificationFailure) in
            try verifier.verifyTransaction(huge)
        }
        let padding = String(repeating: "x", count: VerificationLimits.jwsLengthBytesMax)
        let big = try authority.sign(payloadJSON: PKI.transactionJSON(extra: ",\"padding\":\"\(padding)\""))
        assertFailureCode("payload_too_large") { () throws(VerificationFailure) in try verifier.verifyTransaction(big) }
    }

    /// A repeat hit skips chain building but still checks the signature and the date window.
    func testCacheHitStillChecksSignatureAndValidityWindow() throws {
        let authority = try PKI.authority {
            $0.leafValidFromSeconds = PKI.nowSeconds - 86_400
            $0.leafValidUntilSeconds = PKI.nowSeconds + 86_400
        }
        let verifier = try PKI.verifier(trusting: authority)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        XCTAssertNoThrow(try verifier.verifyTransaction(jws))
        XCTAssertEqual(verifier.cachedChainCount, 1)
        XCTAssertNoThrow(try verifier.verifyTransaction(jws))
        XCTAssertEqual(verifier.cachedChainCount, 1)

        var signature = try StrictBase64.decodeURL(jws.split(separator: ".")[2].utf8)
        signature[10] ^= 0x01
        let tampered = TestPKI.replacingPart(jws, index: 2, with: StrictBase64.encodeURL(signature))
        assertFailure(.badSignature) { () throws(VerificationFailure) in try verifier.verifyTransaction(tampered) }

        for offsetSeconds: Int64 in [-90_000, 86_400, 200_000] {
            let outside = try authority.sign(
                payloadJSON: PKI.transactionJSON(signedDate: String((PKI.nowSeconds + offsetSeconds) * 1000)))
            assertFailure(.expired) { () throws(VerificationFailure) in try verifier.verifyTransaction(outside) }
        }
        let inside = try authority.sign(
            payloadJSON: PKI.transactionJSON(signedDate: String((PKI.nowSeconds + 86_399) * 1000)))
        XCTAssertNoThrow(try verifier.verifyTransaction(inside))
        XCTAssertEqual(verifier.cachedChainCount, 1)
    }

    func testCacheIsBounded() throws {
        let verifierAuthority = try PKI.authority()
        let configuration = VerifierConfiguration(
            bundleId: PKI.bundleId, appAppleId: PKI.appAppleId, allowedEnvironments: [.sandbox],
            trustedRoots: [verifierAuthority.rootDER])
        let verifier = try SignedDataVerifier(configuration: configuration, ocspFetcher: nil, cacheEntriesMax: 2)
        for _ in 0..<4 {
            let authority = try PKI.authority()
            let roots = [authority.rootDER]
            let local = try SignedDataVerifier(
                configuration: VerifierConfiguration(
                    bundleId: PKI.bundleId, appAppleId: nil, allowedEnvironments: [.sandbox], trustedRoots: roots),
                ocspFetcher: nil, cacheEntriesMax: 2)
            XCTAssertNoThrow(try local.verifyTransaction(authority.sign(payloadJSON: PKI.transactionJSON())))
        }
        XCTAssertNoThrow(try verifier.verifyTransaction(verifierAuthority.sign(payloadJSON: PKI.transactionJSON())))
        XCTAssertLessThanOrEqual(verifier.cachedChainCount, 2)
        let cache = CertificateChainCache(capacity: 2)
        let authority = try PKI.authority()
        let leaf = try XCTUnwrap(X509Certificate(der: authority.leafDER))
        let intermediate = try XCTUnwrap(X509Certificate(der: authority.intermediateDER))
        let root = try XCTUnwrap(X509Certificate(der: authority.rootDER))
        let chain = try VerifiedChain.make(leaf: leaf, intermediate: intermediate, root: root).get()
        for index in 0..<5 {
            let key = CertificateChainCache.Key(
                leafFingerprint: [UInt8(index)], intermediateFingerprint: [], rootSetFingerprint: [])
            cache.store(.init(chain: chain), for: key)
            XCTAssertLessThanOrEqual(cache.count, 2)
        }
        let newest = CertificateChainCache.Key(
            leafFingerprint: [4], intermediateFingerprint: [], rootSetFingerprint: [])
        let oldest = CertificateChainCache.Key(
            leafFingerprint: [0], intermediateFingerprint: [], rootSetFingerprint: [])
        XCTAssertNotNil(cache.lookup(newest))
        XCTAssertNil(cache.lookup(oldest))
    }

    func testSynchronousEntryPointRefusesOnlineConfiguration() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority, onlineChecks: true, fetcher: nil)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        assertFailure(.onlineCheckRequired) { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
    }

    func testVerifyAndDecodeJSONReturnsSignedPayloadText() throws {
        let authority = try PKI.authority()
        let payload = PKI.transactionJSON()
        let text = try PKI.verifier(trusting: authority)
            .verifyAndDecodeJSON(authority.sign(payloadJSON: payload), kind: .transaction)
        XCTAssertEqual(text, payload)
    }
}
