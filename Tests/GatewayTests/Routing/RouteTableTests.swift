import Foundation
import XCTest
@testable import Gateway

final class RouteTableTests: XCTestCase {
    private let router = RouteTable()

    func testEveryRouteMatches() {
        let cases: [(String, String, Route, Bool)] = [
            ("GET", "/api/v1/points/balance", .balance, true),
            ("GET", "/api/v1/points/packages?x=1", .packages, true),
            ("POST", "/api/v1/payments/apple/transactions/verify", .verifyTransaction, true),
            (
                "GET", "/api/v1/payments/apple/transactions/2000000847061981",
                .transactionStatus(transactionId: "2000000847061981"), true
            ),
            ("GET", "/api/v1/payments/apple/account-token", .accountToken, true),
            ("GET", "/api/v1/payments/apple/consumption-consent", .consumptionConsent, true),
            ("PUT", "/api/v1/payments/apple/consumption-consent", .setConsumptionConsent, true),
            ("POST", "/api/v1/payments/apple/notifications", .appleNotifications, false),
            ("GET", "/healthz", .health, false),
            ("GET", "/readyz", .readiness, false),
        ]
        for (method, target, route, auth) in cases {
            XCTAssertEqual(
                router.match(method: method, target: target), .matched(route, requiresAuthentication: auth), target)
        }
    }

    func testUnknownPathsAre404() {
        for target in [
            "/", "/api/v1/points", "/api/v1/points/balance/", "/api/v1//points/balance", "/API/v1/points/balance",
            "/api/v1/payments/apple/transactions/", "/api/v1/payments/apple/transactions/1/x", "*",
        ] {
            XCTAssertEqual(router.match(method: "GET", target: target), .notFound, target)
        }
    }

    func testWrongMethodIs405WithAllow() {
        XCTAssertEqual(
            router.match(method: "POST", target: "/api/v1/points/balance"),
            .methodNotAllowed(allowedMethods: ["GET", "HEAD"]))
        XCTAssertEqual(
            router.match(method: "GET", target: "/api/v1/payments/apple/transactions/verify"),
            .methodNotAllowed(allowedMethods: ["POST"]), "the literal route is not shadowed by {transactionId}")
        XCTAssertEqual(
            router.match(method: "DELETE", target: "/api/v1/payments/apple/transactions/123"),
            .methodNotAllowed(allowedMethods: ["GET", "HEAD"]))
        let problem = router.match(method: "PUT", target: "/healthz").problem
        XCTAssertEqual(problem?.status, 405)
        XCTAssertEqual(problem?.response.headers.first("allow"), "GET, HEAD")
        XCTAssertEqual(router.match(method: "GET", target: "/nope").problem?.status, 404)
    }

    func testMethodIsCaseSensitive() {
        XCTAssertEqual(
            router.match(method: "get", target: "/healthz"), .methodNotAllowed(allowedMethods: ["GET", "HEAD"]))
    }

    /// A server that answers GET answers HEAD (RFC 9110 9.3.2): the same
    /// route, whose body the HTTP server leaves out; never a POST route.
    func testHeadIsServedByTheGetRoute() {
        XCTAssertEqual(
            router.match(method: "HEAD", target: "/healthz"), router.match(method: "GET", target: "/healthz"))
        XCTAssertEqual(
            router.match(method: "HEAD", target: "/api/v1/points/balance"),
            router.match(method: "GET", target: "/api/v1/points/balance"))
        XCTAssertEqual(
            router.match(method: "HEAD", target: "/api/v1/payments/apple/transactions/verify"),
            .methodNotAllowed(allowedMethods: ["POST"]))
    }

    /// The table reads the path's bytes in place; over random paths built
    /// from the table's own segments it gives the verdict and the pattern of
    /// the plain reading: split into strings, every pattern tried, the most
    /// literal ones kept.
    func testAgreesWithThePlainReadingOnRandomPaths() {
        var generator = SystemRandomNumberGenerator()
        let pieces =
            Array(Set(router.specs.flatMap { $0.pattern.split(separator: "/").map(String.init) }))
            + ["", "2000000847061981", "x", "Balance", "\u{00e9}t\u{00e9}", "a b", "%2F"]
        let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "get"]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...8, using: &generator)
            var target = "/" + (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined(separator: "/")
            if Bool.random(using: &generator) && count > 0 {
                target = router.specs.randomElement(using: &generator)!.pattern
                    .replacingOccurrences(of: "{transactionId}", with: pieces.randomElement(using: &generator)!)
            }
            if Int.random(in: 0..<8, using: &generator) == 0 { target += "?q=1/2" }
            if Int.random(in: 0..<16, using: &generator) == 0 { target = String(target.dropFirst()) }
            let method = methods.randomElement(using: &generator)!
            let expected = Self.plainReading(router.specs, method: method, target: target)
            let actual = router.resolve(method: method, target: target)
            XCTAssertEqual(actual.match, expected.match, "\(method) \(target)")
            XCTAssertEqual(actual.pattern, expected.pattern, "\(method) \(target)")
            XCTAssertEqual(
                router.resolve(method: method, target: Substring(target)).match, expected.match, "a substring")
        }
    }

    /// The table's rule read plainly (what it did before it read bytes in place).
    private static func plainReading(_ specs: [RouteSpec], method: String, target: String) -> (
        match: RouteMatch, pattern: String?
    ) {
        let path =
            target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard path.hasPrefix("/") else { return (.notFound, nil) }
        let segments = Array(path.utf8.dropFirst()).split(
            separator: UInt8(ascii: "/"), omittingEmptySubsequences: false
        ).map { Array($0) }
        var candidates: [(spec: RouteSpec, parameters: [String])] = []
        for spec in specs {
            let patternSegments = spec.pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard patternSegments.count == segments.count else { continue }
            var parameters: [String] = []
            var fits = true
            for (segment, expected) in zip(segments, patternSegments) {
                if expected.hasPrefix("{") {
                    if segment.isEmpty {
                        fits = false
                    } else {
                        parameters.append(String(decoding: segment, as: UTF8.self))
                    }
                } else if segment != Array(expected.utf8) {
                    fits = false
                }
            }
            if fits { candidates.append((spec, parameters)) }
        }
        guard let best = candidates.map(\.spec.literalSegmentCount).max() else { return (.notFound, nil) }
        let mostSpecific = candidates.filter { $0.spec.literalSegmentCount == best }
        if let hit = mostSpecific.first(where: {
            $0.spec.method == method || (method == "HEAD" && $0.spec.method == "GET")
        }) {
            return (
                .matched(hit.spec.make(hit.parameters), requiresAuthentication: hit.spec.requiresAuthentication),
                hit.spec.pattern
            )
        }
        let allowed = Set(mostSpecific.map(\.spec.method))
        return (
            .methodNotAllowed(allowedMethods: Array(allowed.union(allowed.contains("GET") ? ["HEAD"] : [])).sorted()),
            mostSpecific.first?.spec.pattern
        )
    }
}
