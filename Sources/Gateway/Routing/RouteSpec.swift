/// One row of the route table: method, path pattern (`{name}` matches one
/// non-empty segment) and whether a bearer token is required.
public struct RouteSpec: Sendable {
    public let method: String
    public let pattern: String
    public let requiresAuthentication: Bool
    let make: @Sendable ([String]) -> Route
    /// The pattern's segments ("" for the root), split once: per segment,
    /// a literal's UTF-8 bytes, or nil for a parameter (`{name}`). What the
    /// router compares a request path's bytes with.
    let segmentBytes: [[UInt8]?]
    /// Literal segments outrank parameters: /transactions/verify beats
    /// /transactions/{transactionId}.
    let literalSegmentCount: Int

    init(method: String, pattern: String, requiresAuthentication: Bool, make: @escaping @Sendable ([String]) -> Route) {
        self.method = method
        self.pattern = pattern
        self.requiresAuthentication = requiresAuthentication
        self.make = make
        segmentBytes = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { $0.hasPrefix("{") ? nil : Array($0.utf8) }
        literalSegmentCount = segmentBytes.filter { $0 != nil }.count
    }

    /// The route table, the single source the router and the OpenAPI check use.
    public static let all: [RouteSpec] = [
        RouteSpec(method: "GET", pattern: "/api/v1/points/balance", requiresAuthentication: true) { _ in .balance },
        RouteSpec(method: "GET", pattern: "/api/v1/points/packages", requiresAuthentication: true) { _ in .packages },
        RouteSpec(method: "GET", pattern: "/api/v1/points/ledger", requiresAuthentication: true) { _ in .ledger },
        RouteSpec(method: "GET", pattern: "/api/v1/payments/apple/transactions", requiresAuthentication: true) { _ in
            .transactions
        },
        RouteSpec(method: "POST", pattern: "/api/v1/payments/apple/transactions/verify", requiresAuthentication: true) {
            _ in
            .verifyTransaction
        },
        RouteSpec(method: "POST", pattern: GatewayLimits.receiptPath, requiresAuthentication: true) { _ in
            .verifyReceipt
        },
        RouteSpec(
            method: "GET", pattern: "/api/v1/payments/apple/transactions/{transactionId}", requiresAuthentication: true
        ) {
            .transactionStatus(transactionId: $0[0])
        },
        RouteSpec(method: "GET", pattern: "/api/v1/payments/apple/account-token", requiresAuthentication: true) { _ in
            .accountToken
        },
        RouteSpec(method: "GET", pattern: "/api/v1/payments/apple/consumption-consent", requiresAuthentication: true) {
            _ in
            .consumptionConsent
        },
        RouteSpec(method: "PUT", pattern: "/api/v1/payments/apple/consumption-consent", requiresAuthentication: true) {
            _ in
            .setConsumptionConsent
        },
        // Apple authenticates by signing the payload, not with a bearer token.
        RouteSpec(method: "POST", pattern: "/api/v1/payments/apple/notifications", requiresAuthentication: false) { _ in
            .appleNotifications
        },
        RouteSpec(method: "GET", pattern: "/healthz", requiresAuthentication: false) { _ in .health },
        RouteSpec(method: "GET", pattern: "/readyz", requiresAuthentication: false) { _ in .readiness },
    ]
}
