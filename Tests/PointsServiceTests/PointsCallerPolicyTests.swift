import Contracts
@testable import PointsService
import RPCCore
import ServiceKit
import XCTest

/// Who may call each `points.v1.Points` method: every method of the
/// contract against every kind of caller, with the default identities.
final class PointsCallerPolicyTests: XCTestCase {
    private let policy = PointsCallerPolicy.make(
        payments: "payments", gateway: "gateway", spendCallers: ["chat", "spiffe://iap/ads"])

    /// nil: no certificate.
    private let callers: [String: PeerIdentity?] = [
        "none": nil,
        "payments": PeerIdentity(dnsNames: ["payments"]),
        "gateway": PeerIdentity(dnsNames: ["gateway"]),
        "chat": PeerIdentity(dnsNames: ["chat"]),
        "ads": PeerIdentity(dnsNames: [], uris: ["spiffe://iap/ads"]),
        "stranger": PeerIdentity(dnsNames: ["stranger"]),
        "payments-by-cn": PeerIdentity(dnsNames: [], commonName: "payments"),
    ]

    /// The allowed callers per method; everyone else with a certificate is
    /// PERMISSION_DENIED and anyone without one UNAUTHENTICATED.
    private let allowed: [String: Set<String>] = [
        "Grant": ["payments"], "Clawback": ["payments"], "ReverseClawback": ["payments"],
        "Spend": ["chat", "ads"], "ReverseSpend": ["chat", "ads"],
        "GetBalance": ["gateway", "payments"], "GetBalances": ["gateway"], "GetCatalog": ["gateway", "payments"],
        "ListPackages": ["gateway"], "ListLedger": ["gateway"],
        "GetPurchaseConsumption": ["payments"],
    ]

    func testEveryMethodAgainstEveryCaller() {
        let methods = PointsMethods.all.map { MethodDescriptor(path: $0.path)! }
        XCTAssertEqual(Set(methods.map(\.method)), Set(allowed.keys), "a method of the contract has no decided callers")
        for method in methods {
            for (name, caller) in callers {
                let expected: CallerPolicy.Decision =
                    caller == nil
                    ? .unauthenticated : (allowed[method.method]!.contains(name) ? .allow : .permissionDenied)
                XCTAssertEqual(policy.decide(method, caller: caller), expected, "\(method.method) by \(name)")
            }
        }
    }

    func testHealthChecksAreOpenToAll() {
        for (name, caller) in callers {
            XCTAssertEqual(policy.decide(HealthMethods.check.descriptor, caller: caller), .allow, name)
        }
    }

    func testSpendIsClosedUntilCallersAreConfigured() {
        let closed = PointsCallerPolicy.make(payments: "payments", gateway: "gateway", spendCallers: [])
        for method in [PointsMethods.spend.descriptor, PointsMethods.reverseSpend.descriptor] {
            for (name, caller) in callers {
                XCTAssertEqual(
                    closed.decide(method, caller: caller), caller == nil ? .unauthenticated : .permissionDenied, name)
            }
        }
    }

    func testTheIdentitiesComeFromTheSettings() throws {
        let options = try CommandLineOptions(
            specs: PointsCallerPolicy.optionSpecs, arguments: [],
            environment: [
                "PAYMENTS_IDENTITY": "Payments.Internal", "GATEWAY_IDENTITY": "spiffe://iap/gateway",
                "POINTS_SPEND_CALLERS": "chat, ads",
            ])
        let configured = try PointsCallerPolicy.make(options)
        XCTAssertEqual(configured.callers(of: PointsMethods.grant.descriptor), .only(["payments.internal"]))
        XCTAssertEqual(configured.callers(of: PointsMethods.listLedger.descriptor), .only(["spiffe://iap/gateway"]))
        XCTAssertEqual(
            configured.callers(of: PointsMethods.getBalance.descriptor),
            .only(["spiffe://iap/gateway", "payments.internal"]))
        XCTAssertEqual(configured.callers(of: PointsMethods.spend.descriptor), .only(["chat", "ads"]))
        let defaults = try PointsCallerPolicy.make(
            CommandLineOptions(specs: PointsCallerPolicy.optionSpecs, arguments: [], environment: [:]))
        XCTAssertEqual(defaults, PointsCallerPolicy.make(payments: "payments", gateway: "gateway", spendCallers: []))
        XCTAssertThrowsError(
            try PointsCallerPolicy.make(
                CommandLineOptions(
                    specs: PointsCallerPolicy.optionSpecs, arguments: [],
                    environment: ["POINTS_SPEND_CALLERS": "chat,,ads"]))
        ) { error in
            XCTAssertTrue("\(error)".contains("POINTS_SPEND_CALLERS"), "\(error)")
        }
    }

    /// One identity, one role: the gateway named as PaymentsService or as a
    /// spend caller (or PaymentsService as a spend caller) is a settings
    /// error, not a gateway that may grant or spend.
    func testAnIdentityInTwoRolesIsRefused() throws {
        for (environment, setting) in [
            (["GATEWAY_IDENTITY": "Payments"], "GATEWAY_IDENTITY"),
            (["POINTS_SPEND_CALLERS": "chat,gateway"], "POINTS_SPEND_CALLERS"),
            (["POINTS_SPEND_CALLERS": "payments"], "POINTS_SPEND_CALLERS"),
        ] {
            XCTAssertThrowsError(
                try PointsCallerPolicy.make(
                    CommandLineOptions(
                        specs: PointsCallerPolicy.optionSpecs, arguments: [], environment: environment)),
                "\(environment)"
            ) { error in
                XCTAssertTrue("\(error)".contains(setting) && "\(error)".contains("one role"), "\(error)")
            }
        }
    }
}
