/// Helpers that walk every page of a paginated answer, each bounded by
/// `pagesMax` (default `limits.pagesMax`): past the bound they stop and
/// return `isComplete == false` with the token to resume from.
extension AppStoreServerAPIClient {
    /// Every transaction of the customer's history, with the same `query`
    /// on every page (Apple requires it), starting at `revision` (nil: the beginning).
    public func allTransactionHistory(
        transactionId: String, query: TransactionHistoryQuery = .init(), from revision: String? = nil,
        environment: AppStoreServerEnvironment, pagesMax: Int? = nil
    ) async throws(AppStoreServerAPIError) -> PagedResult<String> {
        try await walk(from: revision, pagesMax: pagesMax) { token throws(AppStoreServerAPIError) in
            let page = try await self.transactionHistory(
                transactionId: transactionId, revision: token, query: query, environment: environment)
            return (page.signedTransactions, page.revision, page.hasMore)
        }
    }

    /// Every refunded transaction of the customer, starting at `revision`.
    public func allRefundHistory(
        transactionId: String, from revision: String? = nil, environment: AppStoreServerEnvironment,
        pagesMax: Int? = nil
    ) async throws(AppStoreServerAPIError) -> PagedResult<String> {
        try await walk(from: revision, pagesMax: pagesMax) { token throws(AppStoreServerAPIError) in
            let page = try await self.refundHistory(
                transactionId: transactionId, revision: token, environment: environment)
            return (page.signedTransactions, page.revision, page.hasMore)
        }
    }

    /// Every notification record matching `request`, the same body on every
    /// page, starting at `paginationToken` (nil: the beginning).
    public func allNotificationHistory(
        _ request: NotificationHistoryRequest, from paginationToken: String? = nil,
        environment: AppStoreServerEnvironment,
        pagesMax: Int? = nil
    ) async throws(AppStoreServerAPIError) -> PagedResult<NotificationHistoryItem> {
        try await walk(from: paginationToken, pagesMax: pagesMax) { token throws(AppStoreServerAPIError) in
            let page = try await self.notificationHistory(request, paginationToken: token, environment: environment)
            return (page.notificationHistory, page.paginationToken, page.hasMore)
        }
    }

    /// The loop behind the helpers: at most `pagesMax` fetches; a page that
    /// says `hasMore` without a new token is an invalid answer (it would
    /// loop forever).
    private func walk<Item: Sendable & Equatable>(
        from start: String?, pagesMax: Int?,
        fetch: (String?) async throws(AppStoreServerAPIError) -> (items: [Item], next: String?, hasMore: Bool)
    ) async throws(AppStoreServerAPIError) -> PagedResult<Item> {
        let bound = pagesMax ?? configuration.limits.pagesMax
        guard bound >= 1 else {
            throw AppStoreServerAPIError(kind: .invalidArgument, detail: "pagesMax must be at least 1")
        }
        var token = start
        var items: [Item] = []
        var pages = 0
        while pages < bound {
            let page = try await fetch(token)
            pages += 1
            items += page.items
            guard page.hasMore else {
                return PagedResult(items: items, nextToken: page.next ?? token, pageCount: pages, isComplete: true)
            }
            guard let next = page.next, !next.isEmpty, next != token else {
                throw AppStoreServerAPIError(
                    kind: .invalidResponse, detail: "hasMore is true but the page carries no new token")
            }
            token = next
        }
        return PagedResult(items: items, nextToken: token, pageCount: pages, isComplete: false)
    }
}
