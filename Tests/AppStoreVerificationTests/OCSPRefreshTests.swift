import Foundation
import XCTest
@testable import AppStoreVerification

/// A clock the test moves by hand.
private final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: Int64

    init(_ seconds: Int64) { self.seconds = seconds }

    var now: Int64 { lock.withLock { seconds } }
    func set(_ value: Int64) { lock.withLock { seconds = value } }
}

/// Online checks over time: GOOD answers reused, held through a responder
/// outage until their `nextUpdate`, the responder asked again at a bounded
/// rate, refusals repeated without asking, one check shared by concurrent
/// verifications (`OCSPStanding`, `OCSPRevocationChecker`).
final class OCSPRefreshTests: XCTestCase {
    private typealias PKI = TestPKI
    private let start = PKI.nowSeconds
    private let refresh = VerificationLimits.ocspResultLifetimeSeconds
    private let retry = VerificationLimits.ocspRetryIntervalSeconds

    private func setUp(
        answer: LocalTestingCertificateAuthority.OCSPAnswer, answerDelay: Duration? = nil
    ) throws -> (verifier: SignedDataVerifier, fetcher: StubOCSPFetcher, clock: ManualClock, jws: String) {
        let authority = try PKI.authority { $0.ocspResponderURL = "http://127.0.0.1:1/ocsp" }
        let fetcher = StubOCSPFetcher(authority: authority, answer: answer, nowSeconds: start, answerDelay: answerDelay)
        let clock = ManualClock(start)
        let verifier = try PKI.verifier(trusting: authority, onlineChecks: true, fetcher: fetcher, clock: { clock.now })
        return (verifier, fetcher, clock, try authority.sign(payloadJSON: PKI.transactionJSON()))
    }

    private func failure(_ verifier: SignedDataVerifier, _ jws: String) async -> VerificationFailure? {
        do {
            _ = try await verifier.verifyTransaction(jws)
            return nil
        } catch {
            return error
        }
    }

    /// The stub's GOOD answers hold for a day (`nextUpdate`); a refresh
    /// that cannot reach the responder keeps using them until then.
    func testGoodAnswersAreHeldThroughAResponderOutageUntilTheirNextUpdate() async throws {
        let (verifier, fetcher, clock, jws) = try setUp(answer: .good)
        _ = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(fetcher.requestCount, 2)

        fetcher.setNetworkDown(true)
        clock.set(start + refresh)
        _ = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(fetcher.requestCount, 3, "the refresh asked (the intermediate's request failed)")
        clock.set(start + refresh + retry - 1)
        _ = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(fetcher.requestCount, 3, "not asked again within the retry interval")
        clock.set(start + refresh + retry)
        _ = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(fetcher.requestCount, 4, "asked again after it")
        XCTAssertEqual(verifier.ocspCounts.good, 1)
        XCTAssertEqual(verifier.ocspCounts.unreachable, 2)
        XCTAssertEqual(verifier.ocspCounts.acceptedThroughOutage, 3)

        // Past the answers' nextUpdate nothing vouches for the chain.
        clock.set(start + 86_400)
        let refused = await failure(verifier, jws)
        XCTAssertEqual(refused?.isRetryable, true, "\(String(describing: refused))")
        XCTAssertEqual(fetcher.requestCount, 5)

        fetcher.setNetworkDown(false)
        clock.set(start + 86_400 + retry)
        _ = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(fetcher.requestCount, 7, "a reachable responder vouches again")
        XCTAssertEqual(verifier.ocspCounts.good, 2)
    }

    func testWithoutAnswersHeldAnOutageIsRefusedWithoutAskingUntilTheRetryInterval() async throws {
        let (verifier, fetcher, clock, jws) = try setUp(answer: .good)
        fetcher.setNetworkDown(true)
        for _ in 0..<3 {
            let refused = await failure(verifier, jws)
            XCTAssertEqual(refused?.code, "retryable")
        }
        XCTAssertEqual(fetcher.requestCount, 1, "one request; the next two were refused without one")
        fetcher.setNetworkDown(false)
        clock.set(start + retry - 1)
        let stillRefused = await failure(verifier, jws)
        XCTAssertEqual(stillRefused?.code, "retryable")
        clock.set(start + retry)
        _ = try await verifier.verifyTransaction(jws)
        XCTAssertEqual(fetcher.requestCount, 3)
        XCTAssertEqual(
            verifier.ocspCounts,
            {
                var counts = OCSPCheckCounts()
                counts.good = 1
                counts.unreachable = 1
                return counts
            }())
    }

    /// REVOKED withdraws the GOOD answers held, is repeated without asking
    /// until the next refresh, and an outage after it stays a definite refusal.
    func testARevocationWithdrawsHeldAnswersAndIsRepeatedWithoutAsking() async throws {
        let (verifier, fetcher, clock, jws) = try setUp(answer: .good)
        _ = try await verifier.verifyTransaction(jws)
        fetcher.setAnswer(.revoked)
        clock.set(start + refresh)
        let revoked = await failure(verifier, jws)
        XCTAssertEqual(revoked, .badChain(reason: "certificate revoked"))
        XCTAssertEqual(fetcher.requestCount, 3)
        clock.set(start + 2 * refresh - 1)
        let repeated = await failure(verifier, jws)
        XCTAssertEqual(repeated, .badChain(reason: "certificate revoked"))
        XCTAssertEqual(fetcher.requestCount, 3, "repeated without asking")

        fetcher.setNetworkDown(true)
        clock.set(start + 2 * refresh)
        let duringOutage = await failure(verifier, jws)
        XCTAssertEqual(duringOutage, .badChain(reason: "certificate revoked"), "held GOOD answers were withdrawn")
        XCTAssertEqual(verifier.ocspCounts.refused, 1)
        XCTAssertEqual(verifier.ocspCounts.acceptedThroughOutage, 0)
    }

    /// Verifications arriving while a check runs wait for it: the responder
    /// is asked once per certificate, not once per verification.
    func testConcurrentVerificationsShareOneCheck() async throws {
        let (verifier, fetcher, _, jws) = try setUp(answer: .good, answerDelay: .milliseconds(300))
        let verifications = 24
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<verifications {
                group.addTask { (try? await verifier.verifyTransaction(jws)) != nil }
            }
            var accepted = 0
            for await passed in group where passed { accepted += 1 }
            return accepted
        }
        XCTAssertEqual(accepted, verifications)
        XCTAssertEqual(fetcher.requestCount, 2)
        XCTAssertEqual(verifier.ocspCounts.good, 1)
    }
}
