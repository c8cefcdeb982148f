import RPCCore
import ServiceKit
import XCTest

/// `CallerPolicy` alone: every kind of rule against every kind of caller.
final class CallerPolicyTests: XCTestCase {
    private let open = MethodDescriptor(service: "t.v1.T", method: "Open")
    private let one = MethodDescriptor(service: "t.v1.T", method: "One")
    private let two = MethodDescriptor(service: "t.v1.T", method: "Two")
    private let nobody = MethodDescriptor(service: "t.v1.T", method: "Nobody")
    private let unlisted = MethodDescriptor(service: "t.v1.T", method: "Unlisted")

    private var policy: CallerPolicy {
        CallerPolicy([
            open: .anyone, one: .only(["payments"]), two: .only(["gateway", "spiffe://iap/Chat"]), nobody: .only([]),
        ])
    }

    /// nil: no certificate.
    private let callers: [String: PeerIdentity?] = [
        "none": nil,
        "payments": PeerIdentity(dnsNames: ["payments"], commonName: "payments"),
        "gateway": PeerIdentity(dnsNames: ["gateway"]),
        "both": PeerIdentity(dnsNames: ["other", "gateway"]),
        "chat-uri": PeerIdentity(dnsNames: [], uris: ["spiffe://iap/Chat"]),
        "chat-uri-other-case": PeerIdentity(dnsNames: [], uris: ["spiffe://iap/chat"]),
        "cn-only": PeerIdentity(dnsNames: [], commonName: "payments"),
        "stranger": PeerIdentity(dnsNames: ["stranger"]),
        "payments-prefix": PeerIdentity(dnsNames: ["payments.evil"]),
        // The right text in the other kind of name: a URI "payments", a DNS name that spells the SPIFFE id.
        "payments-as-uri": PeerIdentity(dnsNames: [], uris: ["payments"]),
        "chat-as-dns": PeerIdentity(dnsNames: ["spiffe://iap/Chat"]),
    ]

    func testEveryRuleAgainstEveryCaller() {
        let expected: [String: [String: CallerPolicy.Decision]] = [
            "Open": callers.mapValues { _ in .allow },
            "One": [
                "none": .unauthenticated, "payments": .allow, "gateway": .permissionDenied, "both": .permissionDenied,
                "chat-uri": .permissionDenied, "chat-uri-other-case": .permissionDenied, "cn-only": .permissionDenied,
                "stranger": .permissionDenied, "payments-prefix": .permissionDenied,
                "payments-as-uri": .permissionDenied,
                "chat-as-dns": .permissionDenied,
            ],
            "Two": [
                "none": .unauthenticated, "payments": .permissionDenied, "gateway": .allow, "both": .allow,
                "chat-uri": .allow, "chat-uri-other-case": .permissionDenied, "cn-only": .permissionDenied,
                "stranger": .permissionDenied, "payments-prefix": .permissionDenied,
                "payments-as-uri": .permissionDenied,
                "chat-as-dns": .permissionDenied,
            ],
            "Nobody": callers.mapValues { $0 == nil ? .unauthenticated : .permissionDenied },
            "Unlisted": callers.mapValues { $0 == nil ? .unauthenticated : .permissionDenied },
        ]
        for method in [open, one, two, nobody, unlisted] {
            for (name, caller) in callers {
                XCTAssertEqual(
                    policy.decide(method, caller: caller), expected[method.method]?[name], "\(method.method) by \(name)"
                )
            }
        }
    }

    func testRulesAreFoundByPath() {
        XCTAssertEqual(policy.callers(of: MethodDescriptor(service: "t.v1.T", method: "Open")), .anyone)
        XCTAssertNil(policy.callers(of: unlisted))
        XCTAssertEqual(
            policy.decide(MethodDescriptor(service: "t.v1.Other", method: "One"), caller: callers["payments"]!),
            .permissionDenied)
    }

    func testIdentitiesAsConfigured() throws {
        XCTAssertEqual(try CallerPolicy.identity(" Payments ", setting: "X"), "payments")
        XCTAssertEqual(try CallerPolicy.identity("spiffe://iap/Chat", setting: "X"), "spiffe://iap/Chat")
        XCTAssertEqual(
            try CallerPolicy.identities("chat, Billing ,spiffe://a/B", setting: "X"),
            ["chat", "billing", "spiffe://a/B"])
        XCTAssertEqual(try CallerPolicy.identities("", setting: "X"), [])
        XCTAssertEqual(try CallerPolicy.identities("  ", setting: "X"), [])
        for bad in ["", "a b", " , ", "a\u{0}b", "é", "a,,b"] {
            XCTAssertThrowsError(
                try CallerPolicy.identities(bad.isEmpty ? "," : bad, setting: "POINTS_SPEND_CALLERS"), bad
            ) { error in
                XCTAssertTrue("\(error)".contains("POINTS_SPEND_CALLERS"), "\(error)")
            }
        }
    }
}
