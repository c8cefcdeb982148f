import IAPCreditsClient
import XCTest

/// The decision table: which answers finish the StoreKit transaction, which
/// keep and retry it, which keep and report it.
final class ProblemPolicyTests: XCTestCase {
    func testWireCodesRoundTripAndUnknownOnesAreKept() {
        for code in ProblemCode.allKnown {
            XCTAssertEqual(ProblemCode(wireCode: code.wireCode), code)
            XCTAssertTrue(code.isKnown)
        }
        XCTAssertEqual(
            Set(ProblemCode.allKnown.map(\.wireCode)).count, ProblemCode.allKnown.count, "one wire text per code")
        XCTAssertEqual(ProblemCode(wireCode: "PAYMENT_NEW_THING"), .unrecognized("PAYMENT_NEW_THING"))
        XCTAssertEqual(
            ProblemCode(wireCode: "payment_product_not_found"), .unrecognized("payment_product_not_found"),
            "codes are case-sensitive")
        XCTAssertFalse(ProblemCode.unrecognized("X").isKnown)
        XCTAssertEqual(ProblemCode.paymentEnvironmentNotAllowed.wireCode, "PAYMENT_ENVIRONMENT_NOT_ALLOWED")
    }

    /// The whole table, row by row (docs/CLIENT.md prints the same).
    func testDecisionTable() {
        let expected: [ProblemCode: (TransactionDisposition, RecoveryAdvice)] = [
            .paymentProductNotFound: (.keepAndReport, .contactSupport),
            .paymentProductMismatch: (.keepAndReport, .contactSupport),
            .paymentTransactionInvalid: (.keepAndReport, .contactSupport),
            .paymentTransactionRevoked: (.finish, .nothingToDo),
            .paymentTransactionConflict: (.keepAndReport, .contactSupport),
            .paymentStarterPackIneligible: (.keepAndReport, .contactSupport),
            .paymentEnvironmentNotAllowed: (.keepAndReport, .nothingToDo),
            .paymentAppleUnavailable: (.keepAndRetry, .retryLater),
            .paymentGrantFailed: (.keepAndRetry, .retryLater),
            .paymentReceiptInvalid: (.keepAndReport, .contactSupport),
            .paymentReceiptsUnavailable: (.keepAndReport, .contactSupport),
            .unauthenticated: (.keepAndRetry, .retryLater),
            .validationFailed: (.keepAndReport, .contactSupport),
            .notFound: (.keepAndReport, .contactSupport),
            .methodNotAllowed: (.keepAndReport, .contactSupport),
            .unsupportedMediaType: (.keepAndReport, .contactSupport),
            .payloadTooLarge: (.keepAndReport, .contactSupport),
            .rateLimited: (.keepAndRetry, .retryLater),
            .serviceUnavailable: (.keepAndRetry, .retryLater),
            .internalError: (.keepAndRetry, .retryLater),
            .requestTimeout: (.keepAndRetry, .retryLater),
            .uriTooLong: (.keepAndReport, .contactSupport),
            .headerFieldsTooLarge: (.keepAndReport, .contactSupport),
            .expectationFailed: (.keepAndReport, .contactSupport),
            .notImplemented: (.keepAndReport, .contactSupport),
            .httpVersionNotSupported: (.keepAndReport, .contactSupport),
        ]
        XCTAssertEqual(Set(expected.keys), Set(ProblemCode.allKnown), "every known code has a row")
        for (code, (disposition, advice)) in expected {
            XCTAssertEqual(code.policy.disposition, disposition, code.wireCode)
            XCTAssertEqual(code.policy.advice, advice, code.wireCode)
        }
    }

    func testOnlyARevokedTransactionIsFinishedOnAProblem() {
        let finishing = ProblemCode.allKnown.filter { $0.policy.disposition == .finish }
        XCTAssertEqual(finishing, [.paymentTransactionRevoked])
    }

    func testUnknownCodesAndAnswerlessFailuresKeepTheTransactionAndRetry() {
        for error in [
            Fixtures.problem(.unrecognized("PAYMENT_SOMETHING_NEW"), status: 409, retryable: false),
            Fixtures.problem(.unrecognized(""), status: 400),
            CreditsError(.transport("timed out")), CreditsError(.unexpectedAnswer(status: 200)),
            CreditsError(.unexpectedAnswer(status: 502)), CreditsError(.notSignedIn),
        ] {
            XCTAssertEqual(error.disposition, .keepAndRetry, error.description)
            XCTAssertEqual(error.advice, .retryLater, error.description)
        }
    }

    /// The library decides by code, not by the answer's `retryable`: a known
    /// refusal stays refused even if a proxy said retryable, an unknown code
    /// is retried even if it said not.
    func testTheCodeDecidesNotTheRetryableMember() {
        XCTAssertEqual(Fixtures.problem(.paymentTransactionRevoked, status: 409, retryable: true).disposition, .finish)
        XCTAssertEqual(Fixtures.problem(.paymentGrantFailed, status: 500, retryable: false).disposition, .keepAndRetry)
        XCTAssertEqual(Fixtures.problem(.unrecognized("NEW"), status: 403, retryable: false).disposition, .keepAndRetry)
    }

    func testInvalidRequestIsReportedNotRetried() {
        let error = CreditsError(.invalidRequest("bad id"))
        XCTAssertEqual(error.disposition, .keepAndReport)
        XCTAssertEqual(error.advice, .contactSupport)
    }
}
