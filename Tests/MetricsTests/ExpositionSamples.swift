import Metrics

/// Registries filled with fixed values, one per service plus one of the
/// format's edge cases: rendered into `Fixtures/*.prom` (golden files,
/// compared byte for byte by `ExpositionSampleTests`), which
/// `Tests/interop/test_prometheus.py` feeds to `promtool check metrics`.
enum ExpositionSamples {
    static let process = ProcessSample(
        residentMemoryBytes: 23_568_384, openFileDescriptors: 17, cpuSeconds: 4.37,
        startTimeSeconds: 1_796_044_996.65)

    /// File name (in Fixtures/) and rendered text.
    static func all() throws -> [(file: String, text: String)] {
        [
            ("gateway.prom", try gateway()), ("payments.prom", try payments()), ("points.prom", try points()),
            ("format.prom", try format()),
        ]
    }

    static func gateway() throws -> String {
        let registry = MetricsRegistry()
        let metrics = try GatewayMetrics(registry: registry, processSampler: { process })
        metrics.recordRequest(
            route: IAPMetricLabels.verifyRoute, method: "POST", status: 200, duration: .milliseconds(42))
        metrics.recordRequest(
            route: IAPMetricLabels.verifyRoute, method: "POST", status: 200, duration: .milliseconds(180))
        metrics.recordRequest(
            route: IAPMetricLabels.verifyRoute, method: "POST", status: 422, duration: .milliseconds(3),
            problemCode: "PAYMENT_TRANSACTION_INVALID")
        metrics.recordRequest(
            route: IAPMetricLabels.notificationsRoute, method: "POST", status: 200, duration: .milliseconds(25))
        metrics.recordRequest(
            route: "/api/v1/payments/apple/transactions/{transactionId}", method: "GET", status: 503,
            duration: .seconds(2), problemCode: "SERVICE_UNAVAILABLE")
        metrics.recordRefusal(.backendUnavailable)
        metrics.recordRequest(
            route: IAPMetricLabels.notificationsRoute, method: "POST", status: 429, duration: .microseconds(40),
            problemCode: "RATE_LIMITED")
        metrics.recordRefusal(.rateLimited)
        metrics.recordRequest(
            route: IAPMetricLabels.unmatchedRoute, method: "BREW", status: 404, duration: .microseconds(80),
            problemCode: "NOT_FOUND")
        metrics.rpcClient.record(
            method: "/payments.v1.Payments/VerifyTransaction", code: "OK", duration: .milliseconds(38))
        metrics.rpcClient.record(method: "/points.v1.Points/GetBalance", code: "UNAVAILABLE", duration: .seconds(1))
        metrics.dependencies.report(.payments, isUp: true)
        metrics.certificates.record(path: "/etc/iap/public/tls.crt", expiresAtUnixSeconds: 1_798_761_600)
        return registry.render()
    }

    static func payments() throws -> String {
        let registry = MetricsRegistry()
        let metrics = try PaymentsMetrics(registry: registry, processSampler: { process })
        metrics.rpcServer.record(
            method: "/payments.v1.Payments/VerifyTransaction", code: "OK", duration: .milliseconds(35))
        metrics.rpcServer.record(
            method: "/payments.v1.Payments/HandleNotification", code: "INVALID_ARGUMENT", duration: .milliseconds(4))
        metrics.rpcClient.record(method: "/points.v1.Points/Grant", code: "OK", duration: .milliseconds(6))
        metrics.rpcClient.record(method: "/points.v1.Points/Clawback", code: "DEADLINE_EXCEEDED", duration: .seconds(5))
        metrics.database.update(inUse: 3, max: 8, waiters: 1)
        metrics.database.recordAcquire(waited: .zero, timedOut: false)
        metrics.database.recordAcquire(waited: .milliseconds(5_000), timedOut: true)
        metrics.dependencies.report(.database, isUp: true)
        metrics.certificates.record(path: "/etc/iap/tls/tls.crt", expiresAtUnixSeconds: 1_798_761_600)
        metrics.recordSagaStep(.grant, .applied, isRetry: false)
        metrics.recordSagaStep(.grant, .deferred, isRetry: false)
        metrics.recordSagaStep(.grant, .applied, isRetry: true)
        metrics.recordSagaStep(.clawback, .needsOperator, isRetry: true)
        metrics.updateStuck(rows: [.clawback: 2], oldestOwedStepAgeSeconds: 1_260.5)
        metrics.recordSagaCommit(.firstSight, writes: 1, failed: false)
        metrics.recordSagaCommit(.firstSight, writes: 5, failed: false)
        metrics.recordSagaCommit(.stepResult, writes: 3, failed: true)
        metrics.recordClawback(overdueCredits: 0)
        metrics.recordClawback(overdueCredits: 70)
        metrics.catalogMissingProducts.increment()
        metrics.recordNotification(type: "REFUND", .recorded)
        metrics.recordNotification(type: "REFUND", .duplicate)
        metrics.recordNotification(type: "CONSUMPTION_REQUEST", .failed)
        metrics.recordNotification(type: IAPMetricLabels.unknownNotificationType, .invalid)
        metrics.recordJWSVerification(.transaction, failureCode: nil)
        metrics.recordJWSVerification(.notification, failureCode: nil)
        metrics.recordJWSVerification(.transaction, failureCode: "bad_chain")
        metrics.recordChainCacheLookup(hit: false)
        metrics.recordChainCacheLookup(hit: true)
        metrics.recordChainCacheLookup(hit: true)
        metrics.recordAppStoreAPIAttempt(.getTransactionInfo, .production, errorKind: nil, duration: .milliseconds(240))
        metrics.recordAppStoreAPIAttempt(
            .getTransactionInfo, .production, errorKind: "not_found", duration: .milliseconds(190))
        metrics.recordAppStoreAPIAttempt(.getTransactionInfo, .sandbox, errorKind: nil, duration: .milliseconds(310))
        metrics.recordAppStoreAPIAttempt(
            .getRefundHistory, .production, errorKind: "rate_limited", duration: .milliseconds(120))
        return registry.render()
    }

    static func points() throws -> String {
        let registry = MetricsRegistry()
        let metrics = try PointsMetrics(registry: registry, processSampler: { process })
        metrics.rpcServer.record(method: "/points.v1.Points/Grant", code: "OK", duration: .milliseconds(4))
        metrics.rpcServer.record(method: "/points.v1.Points/Grant", code: "OK", duration: .milliseconds(9))
        metrics.rpcServer.record(
            method: "/points.v1.Points/Spend", code: "FAILED_PRECONDITION", duration: .milliseconds(2))
        metrics.database.update(inUse: 0, max: 8, waiters: 0)
        metrics.database.recordAcquire(waited: .microseconds(300), timedOut: false)
        metrics.dependencies.report(.database, isUp: false)
        metrics.certificates.record(path: "/etc/iap/tls/ca.crt", expiresAtUnixSeconds: 2_082_758_400)
        metrics.recordGrantCommit(grants: 1, failed: false)
        metrics.recordGrantCommit(grants: 12, failed: false)
        metrics.recordGrantCommit(grants: 3, failed: true)
        metrics.recordSpendCommit(spends: 1, failed: false)
        metrics.recordSpendCommit(spends: 6, failed: false)
        return registry.render()
    }

    /// The format's corners: escaping in label values and HELP, every kind
    /// of float, an empty family, the overflow series and its counter.
    static func format() throws -> String {
        let registry = MetricsRegistry()
        let escaped = try registry.makeCounter(
            name: "sample_escaped_total", help: "Label values with \\ backslash, \"quotes\" and a\nnewline.",
            labelNames: ["value"])
        escaped.labels(#"C:\path"#).increment()
        escaped.labels(#"say "hi""#).increment()
        escaped.labels("two\nlines").increment()
        escaped.labels("Unicode é 🙂 and a tab\t").increment()
        escaped.labels("").increment()
        let floats = try registry.makeGauge(
            name: "sample_float", help: "Floats as Prometheus parses them.", labelNames: ["case"])
        for (name, value) in [
            ("zero", 0.0), ("negative", -3.0), ("fraction", 0.1), ("small", 1e-9), ("large", 1.5e20),
            ("max", Double.greatestFiniteMagnitude), ("plus_inf", .infinity), ("minus_inf", -.infinity), ("nan", .nan),
        ] {
            floats.labels(name).set(value)
        }
        _ = try registry.makeHistogram(
            name: "sample_unused_seconds", help: "A family without series yet.", labelNames: ["route"])
        let bounded = try registry.makeHistogram(
            name: "sample_bounded_seconds", help: "Two label sets at most.", labelNames: ["user"],
            buckets: HistogramBuckets([0.1, 1]), seriesMax: 2)
        for (user, value) in [("a", 0.05), ("b", 0.5), ("c", 2.0), ("d", 0.1)] { bounded.labels(user).observe(value) }
        return registry.render()
    }
}
