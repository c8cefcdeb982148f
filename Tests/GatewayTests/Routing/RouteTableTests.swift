import XCTest
@testable import Gateway

final class RouteTableTests: XCTestCase {
    private let router = RouteTable()

    func testEveryRouteMatches() {
        let cases: [(String, String, Route, Bool)] = [
            ("GET", "/api/v1/points/balance", .balance, true),
            ("GET", "/api/v1/points/packages?x=1", .packages, true),
            ("POST", "/api/v1/payments/apple/transactions/verify", .verifyTransaction, true),
            ("GET", "/api/v1/payments/apple/transactions/2000000847061981", .transactionStatus(transactionId: "2000000847061981"), true),
            ("GET", "/api/v1/payments/apple/account-token", .accountToken, true),
            ("GET", "/api/v1/payments/apple/consumption-consent", .consumptionConsent, true),
            ("PUT", "/api/v1/payments/apple/consumption-consent", .setConsumptionConsent, true),
            ("POST", "/api/v1/payments/apple/notifications", .appleNotifications, false),
            ("GET", "/healthz", .health, false),
            ("GET", "/readyz", .readiness, false),
        ]
        for (method, target, route, auth) in cases {
            XCTAssertEqual(router.match(method: method, target: target), .matched(route, requiresAuthentication: auth), target)
        }
    }

    func testUnknownPathsAre404() {
        for target in ["/", "/api/v1/points", "/api/v1/points/balance/", "/api/v1//points/balance", "/API/v1/points/balance",
                       "/api/v1/payments/apple/transactions/", "/api/v1/payments/apple/transactions/1/x", "*"] {
            XCTAssertEqual(router.match(method: "GET", target: target), .notFound, target)
        }
    }

    func testWrongMethodIs405WithAllow() {
        XCTAssertEqual(router.match(method: "POST", target: "/api/v1/points/balance"), .methodNotAllowed(allowedMethods: ["GET"]))
        XCTAssertEqual(
            router.match(method: "GET", target: "/api/v1/payments/apple/transactions/verify"),
            .methodNotAllowed(allowedMethods: ["POST"]), "the literal route is not shadowed by {transactionId}")
        XCTAssertEqual(
            router.match(method: "DELETE", target: "/api/v1/payments/apple/transactions/123"),
            .methodNotAllowed(allowedMethods: ["GET"]))
        let problem = router.match(method: "PUT", target: "/healthz").problem
        XCTAssertEqual(problem?.status, 405)
        XCTAssertEqual(problem?.response.headers.first("allow"), "GET")
        XCTAssertEqual(router.match(method: "GET", target: "/nope").problem?.status, 404)
    }

    func testMethodIsCaseSensitive() {
        XCTAssertEqual(router.match(method: "get", target: "/healthz"), .methodNotAllowed(allowedMethods: ["GET"]))
    }
}
