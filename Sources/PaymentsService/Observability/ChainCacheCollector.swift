import AppStoreVerification
import Locking
import Metrics

/// Copies the verifier's chain-cache lookup totals into
/// `iap_jws_chain_cache_lookups_total{result}` at each scrape (the verifier
/// counts with two atomics and knows nothing of metrics).
enum ChainCacheCollector {
    static func register(verifier: SignedDataVerifier, metrics: PaymentsMetrics, in registry: MetricsRegistry) throws {
        let counted = Mutex<(hits: UInt64, misses: UInt64)>((0, 0))
        try registry.addCollector {
            let now = verifier.chainCacheLookups
            let (newHits, newMisses) = counted.withLock { counted -> (UInt64, UInt64) in
                defer { counted = now }
                return (now.hits &- counted.hits, now.misses &- counted.misses)
            }
            metrics.jwsChainCacheLookups.labels(ChainCacheResultLabel.hit.rawValue).increment(by: Double(newHits))
            metrics.jwsChainCacheLookups.labels(ChainCacheResultLabel.miss.rawValue).increment(by: Double(newMisses))
        }
    }
}
