import AppStoreVerification
import Locking
import Metrics

/// Copies the verifier's running totals into their metric families at each
/// scrape (the verifier counts on its own and knows nothing of metrics):
/// chain-cache lookups (`iap_jws_chain_cache_lookups_total{result}`) and,
/// with online checks, OCSP checks (`iap_jws_ocsp_checks_total{outcome}`)
/// and answers held through an outage (`iap_jws_ocsp_held_answers_used_total`).
enum VerifierCountsCollector {
    /// The totals read at one scrape.
    private struct Totals {
        var chainCacheHits: UInt64 = 0
        var chainCacheMisses: UInt64 = 0
        var ocsp = OCSPCheckCounts()

        init() {}

        init(_ verifier: SignedDataVerifier) {
            (chainCacheHits, chainCacheMisses) = verifier.chainCacheLookups
            ocsp = verifier.ocspCounts
        }
    }

    static func register(verifier: SignedDataVerifier, metrics: PaymentsMetrics, in registry: MetricsRegistry) throws {
        let counted = Mutex(Totals())
        try registry.addCollector {
            let now = Totals(verifier)
            let before = counted.withLock { counted -> Totals in
                defer { counted = now }
                return counted
            }
            func add(_ counter: Counter, _ labels: String..., new: UInt64, old: UInt64) {
                counter.labels(labels).increment(by: Double(new &- old))
            }
            add(
                metrics.jwsChainCacheLookups, ChainCacheResultLabel.hit.rawValue, new: now.chainCacheHits,
                old: before.chainCacheHits)
            add(
                metrics.jwsChainCacheLookups, ChainCacheResultLabel.miss.rawValue, new: now.chainCacheMisses,
                old: before.chainCacheMisses)
            add(metrics.jwsOCSPChecks, OCSPCheckOutcomeLabel.good.rawValue, new: now.ocsp.good, old: before.ocsp.good)
            add(
                metrics.jwsOCSPChecks, OCSPCheckOutcomeLabel.unreachable.rawValue, new: now.ocsp.unreachable,
                old: before.ocsp.unreachable)
            add(
                metrics.jwsOCSPChecks, OCSPCheckOutcomeLabel.refused.rawValue, new: now.ocsp.refused,
                old: before.ocsp.refused)
            add(
                metrics.jwsOCSPHeldAnswersUsed, new: now.ocsp.acceptedThroughOutage,
                old: before.ocsp.acceptedThroughOutage)
        }
    }
}
