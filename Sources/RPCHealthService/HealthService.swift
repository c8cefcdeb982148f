import Contracts
import RPCCore
import ServiceKit

/// `grpc.health.v1.Health/Check`, answered from the `HealthMonitor`'s cached
/// state (no database round trip per check). `service` may be empty (the
/// whole server) or one of the names served; anything else is NOT_FOUND, as
/// the health protocol specifies.
public enum HealthService {
    public static func register(on router: inout Router, monitor: HealthMonitor, serviceNames: [String]) {
        let known = Set(serviceNames + [""])
        router.register(HealthMethods.check) { request, _ in
            guard known.contains(request.service) else {
                throw RPCError(code: .notFound, message: "unknown service")
            }
            return HealthCheckResponse(status: monitor.isServing ? .serving : .notServing)
        }
    }
}
