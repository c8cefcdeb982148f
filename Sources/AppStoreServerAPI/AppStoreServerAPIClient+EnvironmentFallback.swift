/// Apple's recommended order for data whose environment is unknown (e.g. a
/// transaction id from an app build that may be TestFlight): ask production
/// first, and sandbox only when production answers 404.
extension AppStoreServerAPIClient {
    /// Runs `body` against production, then against sandbox if production
    /// answered a (non-retryable) 404; returns which environment answered.
    /// Any other failure in production is thrown as it is: a production
    /// outage must not turn into a sandbox answer.
    public func productionThenSandbox<Value: Sendable>(
        _ body: (AppStoreServerEnvironment) async throws(AppStoreServerAPIError) -> Value
    ) async throws(AppStoreServerAPIError) -> (environment: AppStoreServerEnvironment, value: Value) {
        do {
            return (.production, try await body(.production))
        } catch  where error.isNotFound {
            return (.sandbox, try await body(.sandbox))
        }
    }

    /// Get Transaction Info in production, then sandbox on 404.
    public func transactionInfoProductionThenSandbox(transactionId: String) async throws(AppStoreServerAPIError)
        -> (environment: AppStoreServerEnvironment, value: TransactionInfoResponse)
    {
        try await productionThenSandbox { environment throws(AppStoreServerAPIError) in
            try await self.transactionInfo(transactionId: transactionId, environment: environment)
        }
    }
}
