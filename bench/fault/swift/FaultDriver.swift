import Contracts
import Foundation
import RPCCore
import RPCRuntime
import Synchronization

/// A signed-in user: id and bearer token (never printed).
struct FaultUser: Sendable {
    let id: String
    let token: String
}

/// The bounded mix: for `seconds`, `workers` tasks each take the next
/// operation number and run, by its last digit, a fresh purchase (0-4), a
/// duplicate of an earlier one (5-6), a spend of 1 credit (7-8) or a refund
/// of the oldest credited purchase not yet refunded (9), round-robin over the
/// gateways. Then, for at most `settleSeconds`, everything whose last answer
/// asked for a resubmission is submitted again, as the app (purchases),
/// Apple (notifications) and a spend caller (same event id) would.
final class FaultDriver: Sendable {
    let options: FaultOptions
    let users: [FaultUser]
    let fixtures: SignedFixtures
    let http: GatewayHTTP
    let points: RPCClient
    let book = FaultBook()
    private let counter = Atomic<Int>(0)
    private let transactionBase = UInt64.random(in: 3_000_000_000...3_999_999_999) * 1_000_000

    init(options: FaultOptions, users: [FaultUser], fixtures: SignedFixtures, points: RPCClient) {
        self.options = options
        self.users = users
        self.fixtures = fixtures
        self.http = GatewayHTTP(gateways: options.gateways)
        self.points = points
    }

    func runMix() async {
        let deadline = ContinuousClock.now.advanced(by: .seconds(options.seconds))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<options.workers {
                group.addTask {
                    while ContinuousClock.now < deadline {
                        let number = self.counter.wrappingAdd(1, ordering: .relaxed).oldValue
                        let answer = await self.operation(number)
                        if case .unknown = answer {
                            try? await Task.sleep(for: .milliseconds(FaultLimits.failurePauseMilliseconds))
                        }
                    }
                }
            }
        }
    }

    /// Resubmits what is outstanding, in rounds, until nothing is or time is up.
    /// Returns how many items were still outstanding at the end.
    func settle() async -> Int {
        let deadline = ContinuousClock.now.advanced(by: .seconds(options.settleSeconds))
        var left = 0
        repeat {
            let (purchases, refunds, spends) = book.outstanding()
            left = purchases.count + refunds.count + spends.count
            if left == 0 { break }
            for index in purchases { _ = await verify(index, kind: "settle-verify") }
            for index in refunds { _ = await refund(index) }
            for index in spends { _ = await spend(index) }
            try? await Task.sleep(for: .milliseconds(FaultLimits.settlePauseMilliseconds))
        } while ContinuousClock.now < deadline
        let (purchases, refunds, spends) = book.outstanding()
        return purchases.count + refunds.count + spends.count
    }

    private func operation(_ number: Int) async -> FaultAnswer {
        switch number % 10 {
        case 5, 6:
            if let index = book.duplicateIndex(counter: number) { return await verify(index, kind: "duplicate") }
        case 7, 8:
            if let user = book.spendUser(counter: number) {
                let index = book.addSpend(
                    .init(eventId: "fault.spend:\(UUID().uuidString.lowercased())", userIndex: user))
                return await spend(index)
            }
        case 9:
            let taken = try? book.takeForRefund { purchase in
                try fixtures.refundBody(
                    transactionId: purchase.transactionId, purchaseMilliseconds: purchase.purchaseMilliseconds)
            }
            if let index = taken ?? nil { return await refund(index) }
        default:
            break
        }
        return await freshPurchase(number)
    }

    private func freshPurchase(_ number: Int) async -> FaultAnswer {
        let transactionId = String(transactionBase + UInt64(number))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        guard let body = try? fixtures.verifyBody(transactionId: transactionId, purchaseMilliseconds: now) else {
            return .unexpected("signing failed")
        }
        let user = number % users.count
        guard
            let index = book.addPurchase(
                .init(transactionId: transactionId, userIndex: user, purchaseMilliseconds: now, body: body))
        else {
            return .unexpected("purchase bound reached")
        }
        return await verify(index, kind: "fresh")
    }

    private func verify(_ index: Int, kind: String) async -> FaultAnswer {
        let purchase = book.purchase(index)
        let answer = await http.post(
            "/api/v1/payments/apple/transactions/verify", body: purchase.body,
            token: users[purchase.userIndex].token, counter: counter.load(ordering: .relaxed))
        book.recordVerify(index, answer, kind: kind)
        return answer
    }

    private func refund(_ index: Int) async -> FaultAnswer {
        guard let body = book.purchase(index).refundBody else { return .unexpected("refund without a body") }
        let answer = await http.post(
            "/api/v1/payments/apple/notifications", body: body, token: nil,
            counter: counter.load(ordering: .relaxed))
        book.recordRefund(index, answer)
        return answer
    }

    private func spend(_ index: Int) async -> FaultAnswer {
        let record = book.spend(index)
        var request = SpendRequest()
        request.eventId = record.eventId
        request.userId = users[record.userIndex].id
        request.amount = 1
        request.bizType = "fault"
        request.bizId = record.eventId
        let answer: FaultAnswer
        do {
            _ = try await points.call(PointsMethods.spend, request, timeout: .seconds(FaultLimits.rpcTimeoutSeconds))
            answer = .accepted
        } catch let error as RPCError {
            answer = Self.classify(error)
        } catch {
            answer = .unknown("spend transport")
        }
        book.recordSpend(index, answer)
        return answer
    }

    /// INSUFFICIENT_CREDITS is a final answer; a permanent reason is a bug;
    /// anything else (UNAVAILABLE, DEADLINE_EXCEEDED, DATABASE_UNAVAILABLE) may change.
    static func classify(_ error: RPCError) -> FaultAnswer {
        if let text = ErrorReason.reason(of: error) {
            let reason = ErrorReason(rawValue: text)
            if reason == .insufficientCredits { return .insufficient }
            return reason.isPermanent ? .unexpected("spend \(error.code) \(text)") : .retryable(text)
        }
        if error.code == .unavailable || error.code == .deadlineExceeded || error.code == .cancelled
            || error.code == .internal
            || error.code == .unknown
        {
            return .unknown("\(error.code)")
        }
        return .unexpected("spend \(error.code)")
    }
}
