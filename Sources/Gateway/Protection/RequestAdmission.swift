import HTTPServer
import Locking
import Metrics
import Synchronization

/// The gateway's two admission limits, checked before any token, body or
/// backend work: a cap on requests in flight in this process (beyond it,
/// 503 SERVICE_UNAVAILABLE with `Retry-After`) and a token bucket per
/// client address on Apple's unauthenticated notification route, where
/// every request costs PaymentsService a signature check (beyond it, 429
/// RATE_LIMITED with `Retry-After`). `/healthz` and `/readyz` are exempt
/// from both, so probes still see the truth under load.
///
/// The client address is the TCP peer: behind a load balancer every
/// client shares the balancer's address (see docs/OPERATIONS.md); no
/// forwarding header is trusted.
public final class RequestAdmission: Sendable {
    /// The verdict on one request.
    public enum Verdict: Sendable, Equatable {
        /// Not limited (health probes); nothing to release.
        case exempt
        /// Admitted: call `leave()` once answered.
        case admitted
        case refused(Problem, RefusalReasonLabel)
    }

    public let limits: AdmissionLimits
    private let inFlight = Atomic<Int>(0)
    private let notificationBuckets: Locking.Mutex<TokenBucketTable>
    private let monotonicMilliseconds: @Sendable () -> Int64

    public init(
        limits: AdmissionLimits,
        monotonicMilliseconds: @escaping @Sendable () -> Int64 = HTTPServerClock.monotonicMilliseconds
    ) {
        self.limits = limits
        notificationBuckets = Mutex(
            TokenBucketTable(rule: limits.notificationRule, keysMax: limits.rateLimitedClientsMax))
        self.monotonicMilliseconds = monotonicMilliseconds
    }

    /// Requests admitted and not yet answered.
    public var inFlightCount: Int { inFlight.load(ordering: .relaxed) }

    /// Decides whether the request for `match` from `peer` may run.
    public func enter(_ match: RouteMatch, peer: String, instance: String) -> Verdict {
        guard case .matched(let route, _) = match else { return admit(instance: instance) }
        switch route {
        case .health, .readiness:
            return .exempt
        case .appleNotifications:
            let key = ClientAddressKey.key(forPeer: peer)
            let now = monotonicMilliseconds()
            let decision = notificationBuckets.withLock { $0.take(key, nowMilliseconds: now) }
            if case .refused(let seconds) = decision {
                return .refused(
                    Self.problem(
                        .rateLimited, retryAfterSeconds: seconds, instance: instance,
                        detail: "Too many notifications from this address; retry after the Retry-After delay."),
                    .rateLimited)
            }
            return admit(instance: instance)
        default:
            return admit(instance: instance)
        }
    }

    /// The admitted request was answered.
    public func leave() {
        let before = inFlight.subtract(1, ordering: .relaxed).oldValue
        precondition(before > 0, "leave() without an admitted request")
    }

    private func admit(instance: String) -> Verdict {
        let before = inFlight.add(1, ordering: .relaxed).oldValue
        guard before < limits.concurrentRequestsMax else {
            inFlight.subtract(1, ordering: .relaxed)
            return .refused(
                Self.problem(
                    .serviceUnavailable, retryAfterSeconds: GatewayLimits.overloadedRetryAfterSeconds,
                    instance: instance,
                    detail: "The gateway is at its limit of concurrent requests; retry after the Retry-After delay."),
                .overloaded)
        }
        return .admitted
    }

    private static func problem(_ code: ProblemCode, retryAfterSeconds: Int64, instance: String, detail: String)
        -> Problem
    {
        var headers = HTTPHeaders()
        headers.add(name: "Retry-After", value: String(retryAfterSeconds))
        return Problem(code, detail: detail, instance: instance, headers: headers)
    }
}
