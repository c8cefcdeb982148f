import AdminServer
import Contracts
import Locking
import Metrics
import RPCRuntime

/// Whether PointsService answers its gRPC health check with SERVING, asked
/// once a second in the background so /readyz costs no round trip: a
/// PaymentsService that cannot reach PointsService cannot grant, so it is
/// not ready (`iap_dependency_up{dependency="points"}` shows the same).
/// The gRPC health of PaymentsService itself follows its database only.
final class PointsReadiness: Sendable {
    static let interval = Duration.seconds(1)
    static let checkTimeout = Duration.seconds(1)

    private let client: RPCClient
    private let dependencies: DependencyMetrics
    /// nil until the first answer: not ready before PointsService was seen.
    private let serving = Mutex<Bool?>(nil)

    init(client: RPCClient, dependencies: DependencyMetrics) {
        self.client = client
        self.dependencies = dependencies
        dependencies.report(.points, isUp: false)
    }

    /// Probes until the task is cancelled.
    func run() async {
        while !Task.isCancelled {
            let isServing: Bool
            do {
                isServing =
                    try await client.call(
                        HealthMethods.check, HealthCheckRequest(service: ""), timeout: Self.checkTimeout
                    )
                    .status == .serving
            } catch {
                isServing = false
            }
            serving.withLock { $0 = isServing }
            dependencies.report(.points, isUp: isServing)
            try? await Task.sleep(for: Self.interval)
        }
    }

    /// The service's own readiness (its database) with PointsService's added.
    func readiness(combinedWith own: AdminReadiness) -> AdminReadiness {
        let pointsUp = serving.withLock { $0 } ?? false
        let detail = (own.detail.isEmpty ? "" : own.detail + " ") + "points=\(pointsUp ? "up" : "down")"
        return AdminReadiness(isReady: own.isReady && pointsUp, detail: detail)
    }
}
