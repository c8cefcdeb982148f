import Foundation
import XCTest

/// A verify whose client goes away mid-flight is cancelled end to end (the
/// gateway's Task, its RPC to PaymentsService, that service's handler),
/// and never half-writes: resubmitting the same transaction credits it
/// exactly once, whatever point the cancellation reached.
final class CancelledVerifyTests: XCTestCase {
    /// Milliseconds between sending a verify and closing its connection:
    /// from before the gateway reads it to well into the saga.
    private static let closeAfterMilliseconds = [0, 0, 1, 2, 3, 5, 8, 12, 20, 35, 60, 100]

    func testAVerifyCancelledAtAnyPointIsCreditedExactlyOnceAfterResubmission() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        var purchases: [(transactionId: String, jws: String)] = []
        var requestIds: [String] = []
        for (index, delay) in Self.closeAfterMilliseconds.enumerated() {
            let transactionId = EndToEndSystem.randomTransactionId()
            let jws = try system.signedTransaction(
                transactionId: transactionId, productId: EndToEndSystem.productId("popular_pack"), appAccountToken: nil)
            purchases.append((transactionId, jws))
            let body = try JSONSerialization.data(
                withJSONObject: [
                    "productCode": "popular_pack", "appStoreProductId": EndToEndSystem.productId("popular_pack"),
                    "transactionId": transactionId, "signedTransactionInfo": jws,
                ], options: [.sortedKeys])
            let requestId = "e2e-cancel-\(index)-\(UUID().uuidString.prefix(8))"
            requestIds.append(requestId)
            let head =
                "POST /api/v1/payments/apple/transactions/verify HTTP/1.1\r\nHost: gateway\r\n"
                + "Authorization: Bearer \(user.token)\r\nContent-Type: application/json\r\nX-Request-Id: \(requestId)\r\n"
                + "Content-Length: \(body.count)\r\n\r\n"
            try await Self.sendThenHangUp(
                port: system.gateway.port, bytes: Array(head.utf8) + Array(body), afterMilliseconds: delay)
        }
        // Resubmission, as the app does with an unfinished transaction.
        for purchase in purchases {
            let answer = try await system.verify(
                user, productCode: "popular_pack", transactionId: purchase.transactionId, jws: purchase.jws)
            XCTAssertEqual(answer.status, 200, answer.text)
            XCTAssertTrue(["granted", "already_granted"].contains(answer.json["status"] as? String), answer.text)
        }
        let ledger = try await system.ledger(user.id)
        XCTAssertEqual(ledger.count, purchases.count, "one ledger row per purchase: \(ledger)")
        XCTAssertEqual(Set(ledger.map(\.eventId)), Set(purchases.map { "payment.apple_iap:\($0.transactionId)" }))
        let account = try await system.account(user.id)
        XCTAssertEqual(account?.balance, Int64(210 * purchases.count))
        for purchase in purchases {
            let status = try await system.paymentStatus(purchase.transactionId)
            XCTAssertEqual(status, "granted")
        }
        try await system.assertBalanceMatchesLedger(user.id)
        // At least the requests closed at once were cancelled, not answered.
        let gatewayLog = system.gateway.logs
        let cancelled = requestIds.filter { id in
            gatewayLog.split(separator: "\n").contains {
                $0.contains(id) && $0.contains("client closed request") && $0.contains(#""status":"499""#)
            }
        }
        XCTAssertFalse(cancelled.isEmpty, "no verify was cancelled: the test did not test cancellation")
    }

    /// Connects, writes `bytes`, waits, then closes both directions without reading.
    private static func sendThenHangUp(port: Int, bytes: [UInt8], afterMilliseconds delay: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                        guard fd >= 0 else { throw HTTPExchangeError(description: "socket failed") }
                        defer { close(fd) }
                        var address = sockaddr_in()
                        address.sin_family = sa_family_t(AF_INET)
                        address.sin_port = in_port_t(UInt16(port).bigEndian)
                        address.sin_addr.s_addr = inet_addr("127.0.0.1")
                        let connected = withUnsafePointer(to: &address) {
                            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                            }
                        }
                        guard connected == 0 else {
                            throw HTTPExchangeError(description: "connect failed: errno \(errno)")
                        }
                        var offset = 0
                        while offset < bytes.count {
                            let written = bytes[offset...].withUnsafeBytes {
                                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                            }
                            guard written > 0 else {
                                throw HTTPExchangeError(description: "send failed: errno \(errno)")
                            }
                            offset += written
                        }
                        if delay > 0 { usleep(UInt32(delay) * 1000) }
                        shutdown(fd, Int32(SHUT_RDWR))
                    })
            }
        }
    }
}
