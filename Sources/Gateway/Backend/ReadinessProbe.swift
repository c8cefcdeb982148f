import Contracts
import Locking
import Metrics
import RPCRuntime

/// Whether both services answer `grpc.health.v1.Health/Check` with
/// SERVING, as last seen by a background probe, so GET /readyz costs no
/// round trip. Not ready until the first probe succeeds, and never again
/// once the gateway begins to shut down (`beginShutdown`).
public final class ReadinessProbe: Sendable {
    private let backends: GatewayBackends
    /// `iap_dependency_up` for both services, when the gateway counts.
    private let dependencies: DependencyMetrics?
    private let state = Mutex<(points: Bool, payments: Bool, shuttingDown: Bool)>((false, false, false))

    public init(backends: GatewayBackends, dependencies: DependencyMetrics? = nil) {
        self.backends = backends
        self.dependencies = dependencies
    }

    /// True when both services were SERVING at the last probe and the
    /// gateway is not shutting down.
    public var isReady: Bool { state.withLock { $0.points && $0.payments && !$0.shuttingDown } }

    /// Per service (and the shutdown), for the log line when readiness
    /// changes and the admin listener's /readyz body.
    public var detail: String {
        let (points, payments, shuttingDown) = state.withLock { ($0.points, $0.payments, $0.shuttingDown) }
        let services = "points=\(points ? "serving" : "not_serving") payments=\(payments ? "serving" : "not_serving")"
        return shuttingDown ? "shutting_down " + services : services
    }

    /// From now on not ready, whatever the probes see: called first thing
    /// in a shutdown, so a load balancer or orchestrator watching /readyz
    /// stops sending before the listener closes and while in-flight
    /// requests drain.
    public func beginShutdown() {
        state.withLock { $0.shuttingDown = true }
    }

    /// Asks both services once (concurrently) and records the answers.
    @discardableResult
    public func probeOnce() async -> Bool {
        async let points = Self.isServing(backends.points)
        async let payments = Self.isServing(backends.payments)
        let result = await (points, payments)
        state.withLock {
            $0.points = result.0; $0.payments = result.1
        }
        dependencies?.report(.points, isUp: result.0)
        dependencies?.report(.payments, isUp: result.1)
        return isReady
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
