import AppStoreVerification
import Foundation
@testable import PaymentsService
import XCTest

/// `SandboxCreditPolicy` for every environment × deployment shape × listed
/// or unlisted user, and the parsing of `APPLE_SANDBOX_USER_IDS`. No I/O.
final class SandboxCreditPolicyTests: XCTestCase {
    private typealias Decision = SandboxCreditPolicy.Decision

    private static let listed = UUID(uuidString: "0f8fad5b-d9cb-469f-a165-70867728950e")!
    private static let alsoListed = UUID(uuidString: "7c9e6679-7425-40de-944b-e07fc1f90ae7")!
    private static let unlisted = UUID(uuidString: "16fd2706-8baf-433b-82eb-8c7fada847da")!
    private static let future = AppStoreEnvironment(rawValue: "Future")
    private static let environments: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting, future]

    private struct Shape {
        let name: String
        let accepted: Set<AppStoreEnvironment>
        let localTesting: Bool
        /// environment -> (decision for a listed user, for an unlisted user)
        let expected: [AppStoreEnvironment: (listed: Decision, unlisted: Decision)]
    }

    private static let credit = Decision.credit
    private static let notAccepted = Decision.refuseEnvironmentNotAccepted
    private static let notListed = Decision.refuseUserNotListed

    /// Written out case by case rather than derived from the rule.
    private static let shapes: [Shape] = [
        Shape(
            name: "production", accepted: [.production], localTesting: false,
            expected: [
                .production: (credit, credit), .sandbox: (notAccepted, notAccepted), .xcode: (notAccepted, notAccepted),
                .localTesting: (notAccepted, notAccepted), future: (notAccepted, notAccepted),
            ]),
        Shape(
            name: "production with an App Review allow-list", accepted: [.production, .sandbox], localTesting: false,
            expected: [
                .production: (credit, credit), .sandbox: (credit, notListed), .xcode: (notAccepted, notAccepted),
                .localTesting: (notAccepted, notAccepted), future: (notAccepted, notAccepted),
            ]),
        Shape(
            name: "staging (Sandbox only)", accepted: [.sandbox], localTesting: false,
            expected: [
                .production: (notAccepted, notAccepted), .sandbox: (credit, credit), .xcode: (notAccepted, notAccepted),
                .localTesting: (notAccepted, notAccepted), future: (notAccepted, notAccepted),
            ]),
        Shape(
            name: "local demo (scripts/run.sh)", accepted: [.production, .sandbox, .xcode], localTesting: true,
            expected: [
                .production: (credit, credit), .sandbox: (credit, notListed), .xcode: (credit, credit),
                .localTesting: (notAccepted, notAccepted), future: (notAccepted, notAccepted),
            ]),
        Shape(
            name: "local staging", accepted: [.sandbox, .xcode, .localTesting], localTesting: true,
            expected: [
                .production: (notAccepted, notAccepted), .sandbox: (credit, credit), .xcode: (credit, credit),
                .localTesting: (credit, credit), future: (notAccepted, notAccepted),
            ]),
        // Xcode listed without APPLE_LOCAL_TESTING=1: the verifier refuses it,
        // and so does the policy.
        Shape(
            name: "Xcode without local-testing mode", accepted: [.production, .sandbox, .xcode], localTesting: false,
            expected: [
                .production: (credit, credit), .sandbox: (credit, notListed), .xcode: (notAccepted, notAccepted),
                .localTesting: (notAccepted, notAccepted), future: (notAccepted, notAccepted),
            ]),
        // An environment Apple may add later counts as Sandbox: listed users only next to Production.
        Shape(
            name: "an unknown environment next to Production", accepted: [.production, future], localTesting: false,
            expected: [
                .production: (credit, credit), .sandbox: (notAccepted, notAccepted), .xcode: (notAccepted, notAccepted),
                .localTesting: (notAccepted, notAccepted), future: (credit, notListed),
            ]),
        Shape(
            name: "an unknown environment without Production", accepted: [.sandbox, future], localTesting: false,
            expected: [
                .production: (notAccepted, notAccepted), .sandbox: (credit, credit), .xcode: (notAccepted, notAccepted),
                .localTesting: (notAccepted, notAccepted), future: (credit, credit),
            ]),
    ]

    func testEveryEnvironmentInEveryDeploymentShapeForListedAndUnlistedUsers() {
        for shape in Self.shapes {
            let policy = SandboxCreditPolicy(
                acceptedEnvironments: shape.accepted, sandboxUserIds: [Self.listed, Self.alsoListed],
                localTestingMode: shape.localTesting)
            XCTAssertEqual(
                Set(shape.expected.keys), Set(Self.environments), "\(shape.name): the table covers every environment")
            for environment in Self.environments {
                guard let expected = shape.expected[environment] else { continue }
                XCTAssertEqual(
                    policy.decide(environment: environment, userId: Self.listed), expected.listed,
                    "\(shape.name), \(environment), listed")
                XCTAssertEqual(
                    policy.decide(environment: environment, userId: Self.alsoListed), expected.listed,
                    "\(shape.name), \(environment), listed")
                XCTAssertEqual(
                    policy.decide(environment: environment, userId: Self.unlisted), expected.unlisted,
                    "\(shape.name), \(environment), unlisted")
            }
        }
    }

    func testAnEmptyAllowListCreditsNoSandboxPurchaseNextToProduction() {
        let policy = SandboxCreditPolicy(
            acceptedEnvironments: [.production, .sandbox], sandboxUserIds: [], localTestingMode: false)
        XCTAssertEqual(policy.decide(environment: .sandbox, userId: Self.listed), .refuseUserNotListed)
        XCTAssertEqual(policy.decide(environment: .production, userId: Self.listed), .credit)
    }

    func testAnAllowListInAStagingDeploymentChangesNothing() {
        let listed = SandboxCreditPolicy(
            acceptedEnvironments: [.sandbox], sandboxUserIds: [Self.listed], localTestingMode: false)
        XCTAssertEqual(listed.decide(environment: .sandbox, userId: Self.unlisted), .credit)
        XCTAssertFalse(listed.acceptsProduction)
    }

    func testEnvironmentNamesAreCaseSensitiveAsApplesAre() {
        let policy = SandboxCreditPolicy(
            acceptedEnvironments: [.production, .sandbox], sandboxUserIds: [], localTestingMode: true)
        XCTAssertEqual(
            policy.decide(environment: AppStoreEnvironment(rawValue: "production"), userId: Self.listed),
            .refuseEnvironmentNotAccepted)
        XCTAssertEqual(
            policy.decide(environment: AppStoreEnvironment(rawValue: ""), userId: Self.listed),
            .refuseEnvironmentNotAccepted)
    }

    func testBuiltFromTheVerifierConfiguration() {
        let configuration = VerifierConfiguration(
            bundleId: "b", appAppleId: 1, allowedEnvironments: [.production, .sandbox, .xcode], localTestingMode: true,
            trustedRoots: [])
        let policy = SandboxCreditPolicy(configuration: configuration, sandboxUserIds: [Self.listed])
        XCTAssertEqual(
            policy,
            SandboxCreditPolicy(
                acceptedEnvironments: [.production, .sandbox, .xcode], sandboxUserIds: [Self.listed],
                localTestingMode: true))
        XCTAssertTrue(policy.acceptsProduction)
    }

    func testRefusalIsAFailedPreconditionThatIsNotRetryable() {
        let error = PaymentsError.environmentNotAllowed(environment: "Sandbox")
        XCTAssertEqual(error.reason, "ENVIRONMENT_NOT_ALLOWED")
        XCTAssertEqual(error.grpcStatusCode, 9)
        XCTAssertFalse(error.isRetryable)
        XCTAssertEqual(error.message, "purchases from the Sandbox environment are not credited by this deployment")
    }

    func testLogCodesAreDistinct() {
        let codes = [Decision.credit, .refuseEnvironmentNotAccepted, .refuseUserNotListed].map(\.logCode)
        XCTAssertEqual(Set(codes).count, 3)
    }

    // MARK: APPLE_ENVIRONMENTS and APPLE_SANDBOX_USER_IDS

    func testProductionIsTheDefaultEnvironment() {
        let spec = AppleVerificationSettings.optionSpecs.first { $0.environmentVariable == "APPLE_ENVIRONMENTS" }
        XCTAssertEqual(spec?.defaultValue, "Production")
    }

    func testUserIdsParseWithSpacesEmptyEntriesAndEitherCase() throws {
        XCTAssertEqual(try AppleVerificationSettings.sandboxUserIds(""), [])
        XCTAssertEqual(try AppleVerificationSettings.sandboxUserIds(" , ,"), [])
        XCTAssertEqual(
            try AppleVerificationSettings.sandboxUserIds(
                " 0f8fad5b-d9cb-469f-a165-70867728950e ,, 7C9E6679-7425-40DE-944B-E07FC1F90AE7,"),
            [Self.listed, Self.alsoListed])
        XCTAssertEqual(
            try AppleVerificationSettings.sandboxUserIds(
                "0f8fad5b-d9cb-469f-a165-70867728950e,0F8FAD5B-D9CB-469F-A165-70867728950E"),
            [Self.listed])
    }

    func testAMalformedEntryIsNamedInAClearSentence() {
        let bad =
            "0f8fad5b-d9cb-469f-a165-70867728950e, 7c9e6679-7425-40de-944b-e07fc1f90ae7x ,16fd2706-8baf-433b-82eb-8c7fada847da"
        XCTAssertEqual(
            parseError(bad),
            "APPLE_SANDBOX_USER_IDS must be comma-separated UUIDs such as 123e4567-e89b-12d3-a456-426614174000 (entry \"7c9e6679-7425-40de-944b-e07fc1f90ae7x\" is not one)"
                + reason)
    }

    func testEveryKindOfMalformedEntryIsRefused() {
        let entries = [
            "not-a-uuid", "0f8fad5bd9cb469fa16570867728950e", "{0f8fad5b-d9cb-469f-a165-70867728950e}",
            "0f8fad5b-d9cb-469f-a165-70867728950", "0f8fad5b-d9cb-469f-a165-70867728950g",
            "0f8fad5b d9cb 469f a165 70867728950e",
            "0f8fad5b-d9cb-469f-a165-70867728950e;7c9e6679-7425-40de-944b-e07fc1f90ae7", "\u{1b}[31m",
        ]
        for entry in entries {
            let message = parseError("0f8fad5b-d9cb-469f-a165-70867728950e," + entry)
            XCTAssertTrue(
                message?.hasPrefix("APPLE_SANDBOX_USER_IDS must be comma-separated UUIDs") == true,
                "\(entry): \(message ?? "accepted")")
            XCTAssertFalse(message?.contains("\u{1b}") ?? true, "control characters are escaped")
        }
    }

    func testALongEntryIsShortenedInTheError() {
        let message = parseError(String(repeating: "z", count: 5_000))
        XCTAssertEqual(
            message,
            "APPLE_SANDBOX_USER_IDS must be comma-separated UUIDs such as 123e4567-e89b-12d3-a456-426614174000 (entry \"\(String(repeating: "z", count: 64))...\" is not one)"
                + reason)
    }

    func testAnEmailListedByMistakeIsMaskedInTheError() {
        let message = parseError("0f8fad5b-d9cb-469f-a165-70867728950e, reviewer@example.com")
        XCTAssertEqual(
            message,
            "APPLE_SANDBOX_USER_IDS must be comma-separated UUIDs such as 123e4567-e89b-12d3-a456-426614174000 (entry \"r***@example.com\" is not one)"
                + reason)
    }

    func testTheListIsBounded() throws {
        let ids = (0..<AppleVerificationSettings.sandboxUserIdsMax).map { _ in UUID().uuidString }
        XCTAssertEqual(
            try AppleVerificationSettings.sandboxUserIds(ids.joined(separator: ",")).count,
            AppleVerificationSettings.sandboxUserIdsMax)
        XCTAssertEqual(
            parseError((ids + [UUID().uuidString]).joined(separator: ",")),
            "APPLE_SANDBOX_USER_IDS must list at most 1000 user ids (it lists 1001)" + reason)
    }

    private let reason =
        ": exactly these users' Sandbox purchases are credited next to Production, so a typo would refuse a reviewer's purchase"

    private func parseError(_ text: String) -> String? {
        do {
            _ = try AppleVerificationSettings.sandboxUserIds(text)
            return nil
        } catch {
            return error.description
        }
    }
}
