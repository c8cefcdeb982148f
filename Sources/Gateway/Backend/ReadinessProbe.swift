import Contracts
import Locking
import Metrics
import RPCRuntime

/// Whether both services answer `grpc.health.v1.Health/Check` with
/// SERVING, as last seen by a background probe, so GET /readyz costs no
/// round trip. Not ready until the first probe succeeds.
public final class ReadinessProbe: Sendable {
    private let backends: GatewayBackends
    /// `iap_dependency_up` for both services, when the gateway counts.
    private let dependencies: DependencyMetrics?
    private let state = Mutex<(points: Bool, payments: Bool)>((false, false))

    public init(backends: GatewayBackends, dependencies: DependencyMetrics? = nil) {
        self.backends = backends
        self.dependencies = dependencies
    }

    /// True when both services were SERVING at the last probe.
    public var isReady: Bool { state.withLock { $0.points && $0.payments } }

    /// Per service, for the log line when readiness changes.
    public var detail: String {
        let (points, payments) = state.withLock { ($0.points, $0.payments) }
        return "points=\(points ? "serving" : "not_serving") payments=\(payments ? "serving" : "not_serving")"
    }

    /// Asks both services once (concurrently) and records the answers.
    @discardableResult
    public func probeOnce() async -> Bool {
        async let points = Self.isServing(backends.points)
        async let payments = Self.isServing(backends.payments)
        let result = await (points, payments)
        state.withLock { $0 = (result.0, result.1) }
        dependencies?.report(.points, isUp: result.0)
        dependencies?.report(.payments, isUp: result.1)
        return result.0 && result.1
    }

    /// Probes every `interval` until the task is cancelled,
    /// calling `onChange` with the new readiness whenever it flips.
    public func run(
        interval: Duration = GatewayLimits.readinessProbeInterval,
        onChange: @Sendable (Bool) -> Void = { _ in }
    ) async {
        var last: Bool?
        while !Task.isCancelled {
            let ready = await probeOnce()
            if ready != last {
                onChange(ready)
                last = ready
            }
            try? await Task.sleep(for: interval)
        }
    }

    private static func isServing(_ client: RPCClient) async -> Bool {
        do {
            let response = try await client.call(
                HealthMethods.check, HealthCheckRequest(service: ""),
                timeout: GatewayLimits.healthCheckTimeout)
            return response.status == .serving
        } catch {
            return false
        }
    }
}
