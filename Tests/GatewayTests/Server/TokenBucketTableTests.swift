import XCTest
@testable import Gateway

/// The notification route's token buckets, driven by an injected clock.
final class TokenBucketTableTests: XCTestCase {
    private func table(rate: Int64 = 2, burst: Int64 = 3, keysMax: Int = 8) -> TokenBucketTable {
        TokenBucketTable(rule: TokenBucketTable.Rule(ratePerSecond: rate, burst: burst), keysMax: keysMax)
    }

    func testABurstIsAllowedThenRefusedWithTheWaitInWholeSeconds() {
        var buckets = table(rate: 2, burst: 3)
        XCTAssertEqual((0..<3).map { _ in buckets.take("a", nowMilliseconds: 0) }, [.allowed, .allowed, .allowed])
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 0), .refused(retryAfterSeconds: 1))
        XCTAssertEqual(buckets.take("b", nowMilliseconds: 0), .allowed, "each key has its own bucket")
    }

    func testTokensComeBackAtTheRateAndNeverAboveTheBurst() {
        var buckets = table(rate: 2, burst: 3)
        for _ in 0..<3 { _ = buckets.take("a", nowMilliseconds: 0) }
        XCTAssertEqual(
            buckets.take("a", nowMilliseconds: 499), .refused(retryAfterSeconds: 1), "half a token less a thousandth")
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 500), .allowed, "one token after 500 ms at 2/s")
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 500), .refused(retryAfterSeconds: 1))
        // An hour later the bucket holds the burst, not 7200 tokens.
        let later: Int64 = 3_600_000
        XCTAssertEqual(
            (0..<4).map { _ in buckets.take("a", nowMilliseconds: later) },
            [.allowed, .allowed, .allowed, .refused(retryAfterSeconds: 1)])
    }

    func testASlowRateSaysHowManySecondsToWait() {
        var buckets = TokenBucketTable(rule: TokenBucketTable.Rule(ratePerSecond: 1, burst: 1), keysMax: 8)
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 0), .allowed)
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 100), .refused(retryAfterSeconds: 1))
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 1_000), .allowed)
    }

    func testAClockGoingBackwardsAddsNothing() {
        var buckets = table(rate: 1, burst: 1)
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 10_000), .allowed)
        XCTAssertEqual(buckets.take("a", nowMilliseconds: 0), .refused(retryAfterSeconds: 1))
    }

    func testTheTableStaysBoundedDroppingRefilledBucketsFirst() {
        var buckets = table(rate: 1, burst: 2, keysMax: 8)
        // "busy" spends its burst and stays busy; seven others are used once.
        _ = buckets.take("busy", nowMilliseconds: 0)
        _ = buckets.take("busy", nowMilliseconds: 0)
        for index in 0..<7 { _ = buckets.take("k\(index)", nowMilliseconds: 1_500 + Int64(index)) }
        XCTAssertEqual(buckets.keyCount, 8)
        // At 2,000 ms "busy" has refilled (2 tokens at 1/s); the others have not.
        XCTAssertEqual(buckets.take("new", nowMilliseconds: 2_000), .allowed)
        XCTAssertLessThanOrEqual(buckets.keyCount, 8)
        XCTAssertEqual(buckets.take("k6", nowMilliseconds: 2_000), .allowed, "k6 kept its bucket: one token was left")
        XCTAssertEqual(
            buckets.take("k6", nowMilliseconds: 2_000), .refused(retryAfterSeconds: 1),
            "k6's bucket was kept, not reset")
    }

    func testWhenNothingHasRefilledTheLeastRecentlySeenGo() {
        var buckets = table(rate: 1, burst: 1, keysMax: 8)
        for index in 0..<8 { _ = buckets.take("k\(index)", nowMilliseconds: Int64(index)) }
        XCTAssertEqual(buckets.take("new", nowMilliseconds: 10), .allowed)
        XCTAssertLessThanOrEqual(buckets.keyCount, 8)
        XCTAssertEqual(
            buckets.take("k7", nowMilliseconds: 10), .refused(retryAfterSeconds: 1),
            "the most recent key kept its empty bucket")
        XCTAssertEqual(buckets.take("k0", nowMilliseconds: 10), .allowed, "the oldest key was dropped: a fresh bucket")
        for index in 0..<100 { _ = buckets.take("flood\(index)", nowMilliseconds: 20) }
        XCTAssertLessThanOrEqual(buckets.keyCount, 8, "never more keys than the bound")
    }

    func testPeerAddressesAreKeyedByIPv4AndIPv6Slash64() {
        XCTAssertEqual(ClientAddressKey.key(forPeer: "17.1.2.3:54321"), "17.1.2.3")
        XCTAssertEqual(ClientAddressKey.key(forPeer: "[2001:db8:1:2:aaaa::1]:443"), "2001:db8:1:2::/64")
        XCTAssertEqual(ClientAddressKey.key(forPeer: "[2001:db8:1:2:bbbb:cccc:dddd:eeee]:1"), "2001:db8:1:2::/64")
        XCTAssertEqual(ClientAddressKey.key(forPeer: "[2001:db8::1]:1"), "2001:db8:0:0::/64")
        XCTAssertEqual(ClientAddressKey.key(forPeer: "[::1]:8080"), "0:0:0:0::/64")
        XCTAssertEqual(ClientAddressKey.key(forPeer: "[::ffff:17.1.2.3]:1"), "17.1.2.3")
        XCTAssertEqual(ClientAddressKey.key(forPeer: "[not an address]:1"), "[not an address]:1")
        XCTAssertEqual(ClientAddressKey.key(forPeer: ""), "")
    }
}
