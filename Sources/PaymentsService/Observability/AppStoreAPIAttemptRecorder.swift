import AppStoreServerAPI
import Locking
import Metrics

/// Turns the App Store Server API client's events into
/// `iap_app_store_api_requests_total{endpoint,environment,outcome}` and the
/// attempt-duration histogram: an `attempt` event starts the clock, the
/// `retry`, `succeeded` or `failed` event of the same attempt stops it and
/// counts it (`ok`, or the error's kind: `rate_limited`, `server_error`...).
/// Endpoints come from the request path's shape, never its ids.
final class AppStoreAPIAttemptRecorder: Sendable {
    /// Attempts in flight at once (the client's own concurrency is far lower);
    /// beyond it the oldest start times are forgotten (their duration is lost,
    /// their count is not).
    static let inFlightMax = 256

    private let metrics: PaymentsMetrics
    private let started = Mutex<[String: ContinuousClock.Instant]>([:])

    init(metrics: PaymentsMetrics) { self.metrics = metrics }

    func record(_ event: AppStoreServerAPIEvent) {
        let key = "\(event.environment.rawValue) \(event.method) \(event.path) \(event.attempt)"
        let now = ContinuousClock.now
        if event.kind == .attempt {
            started.withLock { started in
                if started.count >= Self.inFlightMax { started.removeAll(keepingCapacity: true) }
                started[key] = now
            }
            return
        }
        let startedAt = started.withLock { $0.removeValue(forKey: key) }
        guard let endpoint = Self.endpoint(method: event.method, path: event.path) else { return }
        let environment: AppStoreEnvironmentLabel = event.environment == .production ? .production : .sandbox
        let errorKind = event.kind == .succeeded ? nil : (event.error?.kind.rawValue ?? "unknown")
        metrics.recordAppStoreAPIAttempt(
            endpoint, environment, errorKind: errorKind, duration: startedAt.map { now - $0 } ?? .zero)
    }

    /// The endpoint a request is for, from its method and path (Apple's
    /// documented shapes; nil for anything else).
    static func endpoint(method: String, path: String) -> AppStoreAPIEndpointLabel? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard segments.count >= 3, segments[0] == "inApps" else { return nil }
        switch (method, segments[1], Array(segments.dropFirst(2))) {
        case ("GET", "v1", let rest) where rest.count == 2 && rest[0] == "transactions": return .getTransactionInfo
        case ("GET", "v2", let rest) where rest.count == 2 && rest[0] == "history": return .getTransactionHistory
        case ("GET", "v2", let rest) where rest.count == 3 && rest[0] == "refund" && rest[1] == "lookup":
            return .getRefundHistory
        case ("POST", "v1", ["notifications", "history"]): return .getNotificationHistory
        case ("POST", "v1", ["notifications", "test"]): return .requestTestNotification
        case ("GET", "v1", let rest) where rest.count == 3 && rest[0] == "notifications" && rest[1] == "test":
            return .getTestNotificationStatus
        case ("PUT", "v2", let rest) where rest.count == 3 && rest[0] == "transactions" && rest[1] == "consumption":
            return .sendConsumptionInformation
        case ("GET", "v1", let rest) where rest.count == 2 && rest[0] == "lookup": return .lookUpOrderId
        case ("GET", "v1", let rest) where rest.count == 3 && rest[0] == "transactions" && rest[1] == "appTransactions":
            return .getAppTransactionInfo
        case ("PUT", "v1", let rest) where rest.count == 3 && rest[0] == "transactions" && rest[2] == "appAccountToken":
            return .setAppAccountToken
        default: return nil
        }
    }
}
