import RPCRuntime

/// The two services the gateway calls, one multiplexing `RPCClient` each
/// (each client round-robins over its service's addresses).
public struct GatewayBackends: Sendable {
    /// points.v1.Points (and its grpc.health.v1.Health).
    public let points: RPCClient
    /// payments.v1.Payments (and its grpc.health.v1.Health).
    public let payments: RPCClient

    public init(points: RPCClient, payments: RPCClient) {
        self.points = points
        self.payments = payments
    }

    /// Clients for the given address lists (POINTS_ADDR, PAYMENTS_ADDR);
    /// PaymentsService's configuration defaults to PointsService's.
    public init(
        pointsTargets: [HostAndPort], paymentsTargets: [HostAndPort], configuration: RPCClient.Configuration = .init(),
        paymentsConfiguration: RPCClient.Configuration? = nil, loop: EventLoop? = nil
    ) throws {
        points = try RPCClient(targets: pointsTargets, configuration: configuration, loop: loop)
        payments = try RPCClient(
            targets: paymentsTargets, configuration: paymentsConfiguration ?? configuration, loop: loop)
    }

    /// Closes both clients (calls still in flight fail with UNAVAILABLE).
    public func close() async {
        await points.close()
        await payments.close()
    }
}
