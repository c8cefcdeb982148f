import Contracts
import Logging
import RPCCore
import ServiceKit
import UUIDText

/// `points.v1.Points` on the RPC runtime: converts between Contracts messages
/// and the store's commands; all decisions live in the store and its rules.
/// Every call that moves money (or decides not to) writes one audit line
/// (`LedgerAudit`).
struct PointsRPCService: Sendable {
    let store: PointsStore
    let audit: LedgerAudit

    init(store: PointsStore, logger: Logger) {
        self.store = store
        audit = LedgerAudit(log: AuditLog(logger))
    }

    func register(on router: inout Router) {
        router.register(PointsMethods.getBalance) { request, _ in
            Self.balance(try await store.getBalance(userId: request.userId))
        }
        router.register(PointsMethods.getBalances) { request, _ in
            var response = GetBalancesResponse()
            response.balances = try await store.getBalances(userIds: request.userIds).map(Self.balance)
            return response
        }
        router.register(PointsMethods.listPackages) { request, _ in
            let listing = try await store.listPackages(userId: request.userId, emailHash: request.emailHash)
            var response = ListPackagesResponse()
            response.packages = listing.packages.map(Self.package)
            response.starterPackPurchased = listing.starterPackPurchased
            return response
        }
        router.register(PointsMethods.getCatalog) { _, _ in
            var response = GetCatalogResponse()
            response.packages = store.catalog.packages.map(Self.package)
            return response
        }
        router.register(PointsMethods.grant) { request, call in
            let result = try await audit.audited(
                .grant, eventId: request.eventId, userId: request.userId, requestId: Self.requestId(call)
            ) {
                try await store.grant(request)
            } figures: {
                LedgerAudit.Figures(credits: $0.creditsAdded, balanceAfter: $0.balance, replayed: $0.replayed)
            }
            var response = GrantResponse()
            response.eventId = result.eventId
            response.replayed = result.replayed
            response.creditsAdded = result.creditsAdded
            response.balanceAfter = result.balanceAfter
            response.balance = result.balance
            response.ledgerEntryId = UUIDText.lowercased(result.ledgerEntryId)
            return response
        }
        router.register(PointsMethods.clawback) { request, call in
            let result = try await audit.audited(
                .clawback, eventId: request.eventId, userId: request.userId, requestId: Self.requestId(call)
            ) {
                try await store.clawback(
                    ClawbackCommand(
                        eventId: request.eventId, userId: request.userId, originalEventId: request.originalEventId,
                        bizId: request.bizId, reason: request.reason, amount: request.amount))
            } figures: {
                LedgerAudit.Figures(credits: -$0.creditsDeducted, balanceAfter: $0.balance, replayed: $0.replayed)
            }
            var response = ClawbackResponse()
            response.eventId = result.eventId
            response.replayed = result.replayed
            response.creditsDeducted = result.creditsDeducted
            response.overdueAmount = result.overdueAmount
            response.partial = result.partial
            response.balance = result.balance
            return response
        }
        router.register(PointsMethods.reverseClawback) { request, call in
            let result = try await audit.audited(
                .clawbackReversal, eventId: request.eventId, userId: request.userId, requestId: Self.requestId(call)
            ) {
                try await store.reverseClawback(
                    ReverseClawbackCommand(
                        eventId: request.eventId, userId: request.userId, clawbackEventId: request.clawbackEventId,
                        bizId: request.bizId))
            } figures: {
                LedgerAudit.Figures(credits: $0.creditsRestored, balanceAfter: $0.balance, replayed: $0.replayed)
            }
            var response = ReverseClawbackResponse()
            response.eventId = result.eventId
            response.replayed = result.replayed
            response.creditsRestored = result.creditsRestored
            response.balance = result.balance
            return response
        }
        router.register(PointsMethods.spend) { request, call in
            let result = try await audit.audited(
                .spend, eventId: request.eventId, userId: request.userId, requestId: Self.requestId(call)
            ) {
                try await store.spend(
                    SpendCommand(
                        eventId: request.eventId, userId: request.userId, amount: request.amount,
                        bizType: request.bizType,
                        bizId: request.bizId, metadataJSON: request.metadataJson))
            } figures: {
                LedgerAudit.Figures(credits: -$0.amount, balanceAfter: $0.balance, replayed: $0.replayed)
            }
            var response = SpendResponse()
            response.eventId = result.eventId
            response.replayed = result.replayed
            response.amount = result.amount
            response.balanceAfter = result.balanceAfter
            response.balance = result.balance
            response.ledgerEntryId = UUIDText.lowercased(result.ledgerEntryId)
            response.attributions = result.attributions.map { share in
                var out = SpendAttribution()
                out.sourceEventId = share.sourceEventId
                out.amount = share.amount
                return out
            }
            return response
        }
        router.register(PointsMethods.reverseSpend) { request, call in
            let result = try await audit.audited(
                .spendReversal, eventId: request.eventId, userId: request.userId, requestId: Self.requestId(call)
            ) {
                try await store.reverseSpend(
                    ReverseSpendCommand(
                        eventId: request.eventId, userId: request.userId, spendEventId: request.spendEventId))
            } figures: {
                LedgerAudit.Figures(credits: $0.creditsRestored, balanceAfter: $0.balance, replayed: $0.replayed)
            }
            var response = ReverseSpendResponse()
            response.eventId = result.eventId
            response.replayed = result.replayed
            response.creditsRestored = result.creditsRestored
            response.balance = result.balance
            response.overdueSettled = result.overdueSettled
            return response
        }
        router.register(PointsMethods.getPurchaseConsumption) { request, _ in
            var response = GetPurchaseConsumptionResponse()
            guard
                let lot = try await store.purchaseConsumption(
                    userId: request.userId, purchaseEventId: request.purchaseEventId)
            else {
                return response
            }
            response.found = true
            response.credited = lot.credited
            response.spent = lot.spent
            response.remaining = lot.remaining
            response.clawedBack = lot.clawedBack
            return response
        }
        router.register(PointsMethods.listLedger) { request, _ in
            let page = try await store.listLedger(
                userId: request.userId, pageSize: request.pageSize, pageToken: request.pageToken)
            var response = ListLedgerResponse()
            response.nextPageToken = page.nextPageToken
            response.entries = page.entries.map { entry in
                var out = Contracts.LedgerEntry()
                out.id = UUIDText.lowercased(entry.id)
                out.eventId = entry.eventId
                out.changeType = entry.changeType
                out.direction = entry.direction
                out.amount = entry.amount
                out.balanceAfter = entry.balanceAfter
                out.bizType = entry.bizType
                out.bizId = entry.bizId
                out.metadataJson = entry.metadataJSON
                out.createdAtUnixMs = entry.createdAtUnixMilliseconds
                return out
            }
            return response
        }
    }

    private static func requestId(_ call: ServerRequest<some Sendable>) -> String? {
        call.metadata[stringValues: "x-request-id"].first
    }

    private static func balance(_ balance: PointsBalance) -> GetBalanceResponse {
        var response = GetBalanceResponse()
        response.userId = UUIDText.lowercased(balance.userId)
        response.balance = balance.balance
        response.lifetimeEarned = balance.lifetimeEarned
        response.lifetimeSpent = balance.lifetimeSpent
        return response
    }

    static func package(_ package: CreditPackage) -> Contracts.Package {
        var out = Contracts.Package()
        out.productCode = package.productCode
        out.appStoreProductId = package.appStoreProductId
        out.kind = package.kind == .starter ? .starter : .regular
        out.credits = package.credits
        out.displayName = package.displayName
        out.referencePrice = package.referencePrice
        out.referenceCurrency = package.referenceCurrency
        out.sortOrder = package.sortOrder
        return out
    }
}
