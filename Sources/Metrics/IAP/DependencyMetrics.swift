/// `iap_dependency_up`: what the health probes last saw.
public struct DependencyMetrics: Sendable {
    public let up: Gauge

    /// Registers the family with a series per dependency at 0 (down until
    /// the first probe says otherwise).
    public init(registry: MetricsRegistry, dependencies: [DependencyLabel]) throws(MetricsRegistrationError) {
        up = try registry.makeGauge(IAPMetricNames.dependencyUp)
        for dependency in dependencies { up.labels(dependency.rawValue).set(0) }
    }

    /// Records a probe's result.
    public func report(_ dependency: DependencyLabel, isUp: Bool) {
        up.labels(dependency.rawValue).set(isUp ? 1 : 0)
    }
}
