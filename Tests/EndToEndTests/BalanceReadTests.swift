import Foundation
import XCTest

/// GET balance under concurrency through the real gateway and PointsService
/// (mutual TLS): the gateway's coalesced reads (GetBalances) answer each
/// user their own balance, and a read that starts after a spend sees it.
final class BalanceReadTests: XCTestCase {
    func testConcurrentReadsOfManyUsersShareCallsAndEachGetsTheirOwnBalance() async throws {
        let system = try await EndToEndSystem.get()
        // Six users, each with one purchase of 100 and then a spend of i
        // credits: six different balances.
        var users: [TestUser] = []
        var expected: [String: Int] = [:]
        for index in 0..<6 {
            let user = system.user()
            let answer = try await system.verify(
                user, productCode: "starter_pack", appAccountToken: try await system.accountToken(user))
            XCTAssertEqual(answer.status, 200, answer.text)
            if index > 0 { try await system.spend(user.id, amount: Int64(index)) }
            users.append(user)
            expected[user.token] = 100 - index
        }
        let adminPort = try XCTUnwrap(system.adminPorts?.gateway)
        let callsBefore = try await MetricsSnapshot.scrape(adminPort: adminPort).value(
            "iap_gateway_balance_reads_per_call_count")
        var calls = callsBefore
        // Rounds of 48 concurrent reads (8 per user) until reads were
        // coalesced at least once; every answer is checked in every round.
        for _ in 0..<20 where calls == callsBefore {
            let answers = try await withThrowingTaskGroup(of: (String, Int, Int?).self) { group in
                for _ in 0..<8 {
                    for user in users {
                        group.addTask {
                            let answer = try await system.send("GET", "/api/v1/points/balance", token: user.token)
                            return (user.token, answer.status, answer.json["balance"] as? Int)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (token, status, balance) in answers {
                XCTAssertEqual(status, 200)
                XCTAssertEqual(balance, expected[token], "a read answered another user's balance")
            }
            calls = try await MetricsSnapshot.scrape(adminPort: adminPort).value(
                "iap_gateway_balance_reads_per_call_count")
        }
        XCTAssertGreaterThan(calls, callsBefore, "no reads were coalesced in 20 rounds of 48 concurrent reads")

        // A read that starts after a spend returned sees the spend.
        try await system.spend(users[0].id, amount: 7)
        let after = try await system.send("GET", "/api/v1/points/balance", token: users[0].token)
        XCTAssertEqual(after.json["balance"] as? Int, 93)
        for user in users { try await system.assertBalanceMatchesLedger(user.id) }
    }
}
