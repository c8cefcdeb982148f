import CryptoPrimitives
import Foundation
import XCTest
@testable import AppStoreVerification

/// Answers OCSP requests from a local testing CA, in memory.
final class StubOCSPFetcher: OCSPFetcher, @unchecked Sendable {
    private let lock = NSLock()
    private let authority: LocalTestingCertificateAuthority
    private let nowSeconds: Int64
    private var answerValue: LocalTestingCertificateAuthority.OCSPAnswer
    private var networkDown = false
    private var requests: [String] = []
    private let answerDelay: Duration?

    /// `answerDelay`: each fetch waits this long before answering.
    init(
        authority: LocalTestingCertificateAuthority, answer: LocalTestingCertificateAuthority.OCSPAnswer,
        nowSeconds: Int64,
        answerDelay: Duration? = nil
    ) {
        self.authority = authority
        self.answerValue = answer
        self.nowSeconds = nowSeconds
        self.answerDelay = answerDelay
    }

    var requestCount: Int { lock.withLock { requests.count } }
    var requestedURLs: [String] { lock.withLock { requests } }
    func setNetworkDown(_ down: Bool) { lock.withLock { networkDown = down } }
    func setAnswer(_ answer: LocalTestingCertificateAuthority.OCSPAnswer) { lock.withLock { answerValue = answer } }

    func fetch(requestDER: [UInt8], responderURL: String) async throws(OCSPFetchError) -> [UInt8] {
        let (down, answer) = lock.withLock { () -> (Bool, LocalTestingCertificateAuthority.OCSPAnswer) in
            requests.append(responderURL)
            return (networkDown, answerValue)
        }
        if let answerDelay { try? await Task.sleep(for: answerDelay) }
        if down { throw OCSPFetchError(reason: "connection refused") }
        guard let response = authority.ocspResponse(requestDER: requestDER, answer: answer, nowSeconds: nowSeconds)
        else {
            throw OCSPFetchError(reason: "responder does not know the certificate")
        }
        return response
    }
}

final class OCSPTests: XCTestCase {
    private typealias PKI = TestPKI
    private let responderURL = "http://127.0.0.1:1/ocsp"

    private func setUp(
        answer: LocalTestingCertificateAuthority.OCSPAnswer, withResponder: Bool = true,
        configure: (inout LocalTestingCertificateAuthority.Options) -> Void = { _ in }
    ) throws -> (LocalTestingCertificateAuthority, SignedDataVerifier, StubOCSPFetcher) {
        let url = responderURL
        let authority = try PKI.authority {
            if withResponder { $0.ocspResponderURL = url }
            configure(&$0)
        }
        let fetcher = StubOCSPFetcher(authority: authority, answer: answer, nowSeconds: PKI.nowSeconds)
        let verifier = try PKI.verifier(trusting: authority, onlineChecks: true, fetcher: fetcher)
        return (authority, verifier, fetcher)
    }

    private func expectFailure(
        _ verifier: SignedDataVerifier, _ jws: String, file: StaticString = #filePath, line: UInt = #line
    ) async -> VerificationFailure? {
        do {
            _ = try await verifier.verifyTransaction(jws)
            XCTFail("expected a failure", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testGoodAnswersPassAndAreReused() async throws {
        let (authority, verifier, fetcher) = try setUp(answer: .good)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        let transaction = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(transaction.productId, "points_100")
        XCTAssertEqual(fetcher.requestCount, 2)
        XCTAssertEqual(fetcher.requestedURLs, [responderURL, responderURL])
        _ = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(fetcher.requestCount, 2, "a fresh good answer is reused")
        // The cache still checks signatures in online mode.
        var signature = try StrictBase64.decodeURL(jws.split(separator: ".")[2].utf8)
        signature[0] ^= 0x80
        let tampered = PKI.replacingPart(jws, index: 2, with: StrictBase64.encodeURL(signature))
        let failure = await expectFailure(verifier, tampered)
        XCTAssertEqual(failure, .badSignature)
    }

    func testRevokedUnknownAndUntrustedAnswersAreBadChain() async throws {
        let cases: [(LocalTestingCertificateAuthority.OCSPAnswer, String)] = [
            (.revoked, "certificate revoked"), (.unknown, "OCSP status unknown"),
            (.signedByStranger, "OCSP response signature not trusted"),
        ]
        for (answer, reason) in cases {
            let (authority, verifier, _) = try setUp(answer: answer)
            let failure = await expectFailure(verifier, try authority.sign(payloadJSON: PKI.transactionJSON()))
            XCTAssertEqual(failure, .badChain(reason: reason))
            XCTAssertEqual(failure?.isRetryable, false)
        }
    }

    func testStaleAndTryLaterAnswersAreRetryable() async throws {
        for answer in [LocalTestingCertificateAuthority.OCSPAnswer.stale, .tryLater, .oldWithoutNextUpdate] {
            let (authority, verifier, _) = try setUp(answer: answer)
            let failure = await expectFailure(verifier, try authority.sign(payloadJSON: PKI.transactionJSON()))
            XCTAssertEqual(failure?.isRetryable, true, "\(answer): \(String(describing: failure))")
        }
    }

    func testNetworkFailureIsRetryableNeverASilentPass() async throws {
        let (authority, verifier, fetcher) = try setUp(answer: .good)
        fetcher.setNetworkDown(true)
        let jws = try authority.sign(payloadJSON: PKI.transactionJSON())
        let failure = await expectFailure(verifier, jws)
        XCTAssertEqual(failure?.code, "retryable")
        XCTAssertEqual(failure?.isRetryable, true)
        // Asked again only after the retry interval (OCSPRefreshTests).
        fetcher.setNetworkDown(false)
        let repeated = await expectFailure(verifier, jws)
        XCTAssertEqual(repeated?.code, "retryable")
        XCTAssertEqual(fetcher.requestCount, 1)
    }

    func testCertificateWithoutResponderFails() async throws {
        let (authority, verifier, fetcher) = try setUp(answer: .good, withResponder: false)
        let failure = await expectFailure(verifier, try authority.sign(payloadJSON: PKI.transactionJSON()))
        XCTAssertEqual(failure?.code, "bad_chain")
        XCTAssertEqual(fetcher.requestCount, 0)
    }

    /// Online, the effective date is now, not signedDate.
    func testEffectiveDateIsNowWhenOnline() async throws {
        let (authority, verifier, _) = try setUp(answer: .good) {
            $0.leafValidFromSeconds = PKI.nowSeconds - 86_400
            $0.leafValidUntilSeconds = PKI.nowSeconds - 3_600
        }
        // signedDate inside the leaf window would pass offline, but online "now" is past it.
        let jws = try authority.sign(
            payloadJSON: PKI.transactionJSON(signedDate: String((PKI.nowSeconds - 7_200) * 1000)))
        let failure = await expectFailure(verifier, jws)
        XCTAssertEqual(failure, .expired)
        let offline = try PKI.verifier(trusting: authority)
        _ = try await offline.verifyTransaction(jws)
    }

    func testOfflineConfigurationAsyncEntryPointNeedsNoFetcher() async throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let notification = try await verifier.verifyAndDecodeJSON(
            authority.sign(payloadJSON: PKI.transactionJSON()), kind: .transaction)
        XCTAssertTrue(notification.contains("points_100"))
    }

    /// The real HTTP fetcher against a local stand-in responder on 127.0.0.1:0.
    func testHTTPFetcherAgainstLocalResponder() async throws {
        let placeholder = try PKI.authority()
        let responder = try LocalOCSPHTTPResponder(connectionsMax: 2) { request in
            placeholder.ocspResponse(requestDER: request, answer: .good, nowSeconds: PKI.nowSeconds)
        }
        let authority = try PKI.authority { $0.ocspResponderURL = "http://127.0.0.1:\(responder.port)/ocsp" }
        responder.setHandler { request in
            authority.ocspResponse(requestDER: request, answer: .good, nowSeconds: PKI.nowSeconds)
        }
        let verifier = try PKI.verifier(
            trusting: authority, onlineChecks: true, fetcher: HTTPOCSPFetcher(timeoutMilliseconds: 5_000))
        let transaction = try await verifier.verifyTransaction(authority.sign(payloadJSON: PKI.transactionJSON()))
        XCTAssertEqual(transaction.productId, "points_100")
        XCTAssertEqual(responder.servedCount, 2)
        responder.stop()
    }

    func testHTTPFetcherConnectionRefusedIsAnError() async throws {
        // Bind and close a port so nothing listens there.
        let responder = try LocalOCSPHTTPResponder(connectionsMax: 0) { _ in nil }
        let port = responder.port
        responder.stop()
        let fetcher = HTTPOCSPFetcher(timeoutMilliseconds: 2_000)
        do {
            _ = try await fetcher.fetch(requestDER: [1, 2, 3], responderURL: "http://127.0.0.1:\(port)/")
            XCTFail("expected a fetch error")
        } catch {
            XCTAssertFalse(error.reason.isEmpty)
        }
        do {
            _ = try await fetcher.fetch(requestDER: [1], responderURL: "https://ocsp.apple.com/")
            XCTFail("expected a fetch error")
        } catch {
            XCTAssertEqual(error.reason, "only http:// responders are supported")
        }
    }

    /// An answer about another certificate does not vouch for this one.
    func testAnswerForAnotherCertificateIsRefused() throws {
        let authority = try PKI.authority { $0.ocspResponderURL = "http://127.0.0.1:1/" }
        let leaf = try XCTUnwrap(X509Certificate(der: authority.leafDER))
        let intermediate = try XCTUnwrap(X509Certificate(der: authority.intermediateDER))
        let root = try XCTUnwrap(X509Certificate(der: authority.rootDER))
        let leafCheck = OCSPCheck(certificate: leaf, issuer: intermediate, root: root, nowSeconds: PKI.nowSeconds)
        let intermediateCheck = OCSPCheck(
            certificate: intermediate, issuer: root, root: root, nowSeconds: PKI.nowSeconds)
        let intermediateAnswer = try XCTUnwrap(
            authority.ocspResponse(
                requestDER: try XCTUnwrap(intermediateCheck.requestDER()), answer: .good, nowSeconds: PKI.nowSeconds))
        XCTAssertNoThrow(try intermediateCheck.check(responseDER: intermediateAnswer))
        XCTAssertThrowsError(try leafCheck.check(responseDER: intermediateAnswer))
        XCTAssertThrowsError(try leafCheck.check(responseDER: [0x30, 0x03, 0x0A, 0x01, 0x00])) { error in
            XCTAssertEqual((error as? VerificationFailure)?.isRetryable, true)
        }
        // A fresh answer judged a week later is stale.
        let leafAnswer = try XCTUnwrap(
            authority.ocspResponse(
                requestDER: try XCTUnwrap(leafCheck.requestDER()), answer: .good, nowSeconds: PKI.nowSeconds))
        XCTAssertNoThrow(try leafCheck.check(responseDER: leafAnswer))
        let later = OCSPCheck(
            certificate: leaf, issuer: intermediate, root: root, nowSeconds: PKI.nowSeconds + 7 * 86_400)
        XCTAssertThrowsError(try later.check(responseDER: leafAnswer)) { error in
            XCTAssertEqual((error as? VerificationFailure)?.isRetryable, true)
        }
    }

    func testHTTPResponseParsing() {
        let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef".utf8)
        XCTAssertEqual(try HTTPOCSPFetcher.parseResponse(ok).get(), Array("abc".utf8))
        let notFound = Array("HTTP/1.1 404 Not Found\r\n\r\nx".utf8)
        XCTAssertThrowsError(try HTTPOCSPFetcher.parseResponse(notFound).get())
        let truncated = Array("HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\nab".utf8)
        XCTAssertThrowsError(try HTTPOCSPFetcher.parseResponse(truncated).get())
        XCTAssertThrowsError(try HTTPOCSPFetcher.parseResponse(Array("garbage".utf8)).get())
    }
}
