import Contracts
import XCTest
@testable import Gateway

final class RPCFailureMappingTests: XCTestCase {
    private typealias Code = RPCFailureMapping.GRPCCode

    func testDocumentedReasons() {
        let cases: [(Int, String, ProblemCode)] = [
            (Code.notFound, "PRODUCT_NOT_FOUND", .paymentProductNotFound),
            (Code.notFound, "TRANSACTION_NOT_FOUND", .notFound),
            (Code.invalidArgument, "VALIDATION_FAILED", .validationFailedUnprocessable),
            (Code.invalidArgument, "PRODUCT_MISMATCH", .paymentProductMismatch),
            (Code.invalidArgument, "TRANSACTION_INVALID", .paymentTransactionInvalid),
            (Code.failedPrecondition, "TRANSACTION_REVOKED", .paymentTransactionRevoked),
            (Code.failedPrecondition, "STARTER_PACK_INELIGIBLE", .paymentStarterPackIneligible),
            (Code.failedPrecondition, "ENVIRONMENT_NOT_ALLOWED", .paymentEnvironmentNotAllowed),
            (Code.alreadyExists, "TRANSACTION_CONFLICT", .paymentTransactionConflict),
            (Code.unavailable, "APPLE_UNAVAILABLE", .paymentAppleUnavailable),
            (Code.unavailable, "POINTS_UNAVAILABLE", .serviceUnavailable),
            (Code.unavailable, "DATABASE_UNAVAILABLE", .serviceUnavailable),
            (Code.internalError, "GRANT_FAILED", .paymentGrantFailed),
            (Code.invalidArgument, "RECEIPT_INVALID", .paymentReceiptInvalid),
            (Code.failedPrecondition, "APPLE_API_NOT_CONFIGURED", .paymentReceiptsUnavailable),
        ]
        for (code, reason, problem) in cases {
            XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: code, reason: reason), problem, reason)
        }
    }

    func testFallbacksByCode() {
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unavailable, reason: nil), .serviceUnavailable)
        XCTAssertEqual(
            RPCFailureMapping.problemCode(grpcCode: Code.unavailable, reason: "SOMETHING_NEW"), .serviceUnavailable)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.deadlineExceeded, reason: nil), .serviceUnavailable)
        XCTAssertTrue(RPCFailureMapping.problemCode(grpcCode: Code.deadlineExceeded, reason: "X").retryable)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unknown, reason: nil), .internalError)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unauthenticated, reason: nil), .internalError)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: 99, reason: nil), .internalError)
    }

    func testProblemCarriesInstanceAndDetail() {
        let problem = RPCFailureMapping.problem(
            grpcCode: Code.invalidArgument, reason: "TRANSACTION_INVALID", detail: "signature_invalid", instance: "/v")
        XCTAssertEqual(problem.status, 422)
        XCTAssertEqual(problem.detail, "signature_invalid")
        XCTAssertEqual(problem.instance, "/v")
        XCTAssertFalse(problem.code.retryable)
    }

    func testReasonUnderTheWrongCodeIsNotTrusted() {
        XCTAssertEqual(
            RPCFailureMapping.problemCode(grpcCode: Code.invalidArgument, reason: "STARTER_PACK_INELIGIBLE"),
            .internalError)
        XCTAssertEqual(
            RPCFailureMapping.problemCode(grpcCode: Code.unavailable, reason: "GRANT_FAILED"), .serviceUnavailable)
        XCTAssertEqual(
            RPCFailureMapping.problemCode(grpcCode: Code.invalidArgument, reason: "ENVIRONMENT_NOT_ALLOWED"),
            .internalError)
    }

    func testEveryReasonInTheProtoHeadersIsMapped() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var documented: Set<String> = []
        for proto in ["Protos/points/v1/points.proto", "Protos/payments/v1/payments.proto"] {
            let text = try String(contentsOf: root.appendingPathComponent(proto), encoding: .utf8)
            for line in text.split(separator: "\n")
            where line.hasPrefix("//   ") || line.hasPrefix("//                       ") {
                let words = line.dropFirst(2).split(whereSeparator: { $0 == " " || $0 == "," })
                for word in words where word.allSatisfy({ $0.isUppercase || $0 == "_" }) && word.count > 2 {
                    documented.insert(String(word))
                }
            }
        }
        let grpcNames: Set<String> = [
            "INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION", "ALREADY_EXISTS", "UNAVAILABLE", "INTERNAL",
        ]
        let reasons = documented.subtracting(grpcNames)
        XCTAssertGreaterThanOrEqual(reasons.count, 13)
        XCTAssertTrue(reasons.contains("ENVIRONMENT_NOT_ALLOWED"))
        XCTAssertTrue(reasons.isSuperset(of: ["RECEIPT_INVALID", "APPLE_API_NOT_CONFIGURED"]))
        let mapped = Set(RPCFailureMapping.documentedPairs.map(\.reason))
        XCTAssertEqual(reasons.subtracting(mapped), [], "every documented reason has a row")
    }

    /// Transient vs permanent is decided once, by `ErrorReason.isPermanent`:
    /// a problem says `retryable: true` exactly when resubmitting can
    /// succeed. The two exceptions are deliberate: a reason that reaches
    /// the gateway only through our own bug is INTERNAL (retryable, so the
    /// app never finishes a paid transaction on it), and PRODUCT_NOT_FOUND
    /// at verify means the app named a code the catalog does not have for a
    /// product it does have (refresh the packages; the same request will
    /// not succeed).
    func testRetryableFollowsTheReasonsPermanence() {
        for pair in RPCFailureMapping.documentedPairs {
            let reason = ErrorReason(rawValue: pair.reason)
            XCTAssertTrue(ErrorReason.all.contains(reason), "\(pair.reason) is in the shared vocabulary")
            if pair.problem == .internalError {
                XCTAssertTrue(pair.problem.retryable)
                continue
            }
            if reason == .productNotFound {
                XCTAssertFalse(pair.problem.retryable)
                continue
            }
            XCTAssertEqual(pair.problem.retryable, !reason.isPermanent, "\(pair.reason) → \(pair.problem)")
        }
        XCTAssertTrue(
            RPCFailureMapping.problemCode(grpcCode: Code.internalError, reason: ErrorReason.grantFailed.rawValue)
                .retryable,
            "a verified purchase not yet credited is kept and resubmitted")
    }
}
