import Contracts
@testable import PaymentsService
import RPCCore
import ServiceKit
import XCTest

/// Who may call each `payments.v1.Payments` method: the gateway only;
/// health checks are open.
final class PaymentsCallerPolicyTests: XCTestCase {
    private let callers: [String: PeerIdentity?] = [
        "none": nil,
        "gateway": PeerIdentity(dnsNames: ["gateway"]),
        "payments": PeerIdentity(dnsNames: ["payments"]),
        "points": PeerIdentity(dnsNames: ["points"]),
        "chat": PeerIdentity(dnsNames: ["chat"]),
        "gateway-by-cn": PeerIdentity(dnsNames: [], commonName: "gateway"),
    ]

    func testEveryMethodAgainstEveryCaller() {
        let policy = PaymentsCallerPolicy.make(gateway: "gateway")
        for signature in PaymentsMethods.all {
            let method = MethodDescriptor(path: signature.path)!
            for (name, caller) in callers {
                let expected: CallerPolicy.Decision =
                    caller == nil ? .unauthenticated : (name == "gateway" ? .allow : .permissionDenied)
                XCTAssertEqual(policy.decide(method, caller: caller), expected, "\(method.method) by \(name)")
            }
        }
        for (name, caller) in callers {
            XCTAssertEqual(policy.decide(HealthMethods.check.descriptor, caller: caller), .allow, "health by \(name)")
        }
        // A method outside the contract is nobody's.
        let unknown = MethodDescriptor(service: PaymentsMethods.service, method: "Refund")
        XCTAssertEqual(policy.decide(unknown, caller: callers["gateway"]!), .permissionDenied)
    }

    func testTheGatewaysIdentityComesFromTheSettings() throws {
        let options = try CommandLineOptions(
            specs: PaymentsCallerPolicy.optionSpecs, arguments: [],
            environment: ["GATEWAY_IDENTITY": "spiffe://iap/edge"])
        let policy = try PaymentsCallerPolicy.make(options)
        XCTAssertEqual(policy.callers(of: PaymentsMethods.verifyTransaction.descriptor), .only(["spiffe://iap/edge"]))
        let defaults = try PaymentsCallerPolicy.make(
            CommandLineOptions(specs: PaymentsCallerPolicy.optionSpecs, arguments: [], environment: [:]))
        XCTAssertEqual(defaults, PaymentsCallerPolicy.make(gateway: "gateway"))
    }
}
