import Foundation

/// Checks verified chains with OCSP for `SignedDataVerifier` (online checks):
/// the intermediate against the root, then the leaf against the
/// intermediate. One check per chain runs at a time, however many
/// verifications need it at once: they all wait for its outcome instead of
/// each asking the responder (at a refresh under load, the fetches would
/// otherwise run into `ocspFetchesInFlightMax` and refuse purchases). The
/// outcome is recorded in the chain's cached `OCSPStanding`.
final class OCSPRevocationChecker: @unchecked Sendable {
    private let fetcher: (any OCSPFetcher)?
    private let cache: CertificateChainCache
    private let lock = NSLock()
    /// The check running for each chain; guarded by `lock`.
    private var checksInFlight: [CertificateChainCache.Key: Task<OCSPStanding, Never>] = [:]
    /// Checks by outcome, guarded by `lock` (metrics read the totals).
    private var outcomeCounts = OCSPCheckCounts()

    init(fetcher: (any OCSPFetcher)?, cache: CertificateChainCache) {
        self.fetcher = fetcher
        self.cache = cache
    }

    /// Checks run so far, by outcome.
    var checkCounts: OCSPCheckCounts { lock.withLock { outcomeCounts } }

    /// Counts a verification accepted on answers held through an outage.
    func countAcceptedThroughOutage() { lock.withLock { outcomeCounts.acceptedThroughOutage += 1 } }

    /// The chain's standing after a check: the one in flight if any, else
    /// one started here, unless a check that ended since `entry` was read
    /// already made one unnecessary.
    func refreshedStanding(
        of entry: CertificateChainCache.Entry, key: CertificateChainCache.Key, atSeconds now: Int64
    ) async -> OCSPStanding {
        enum Next {
            case wait(Task<OCSPStanding, Never>)
            case settled(OCSPStanding)
        }
        let next: Next = lock.withLock {
            if let running = checksInFlight[key] { return .wait(running) }
            let latest = cache.lookup(key)?.ocsp ?? entry.ocsp
            if latest.decision(atSeconds: now) != .ask { return .settled(latest) }
            let chain = entry.chain
            let running = Task { [self] in
                let outcome = await checkBoth(of: chain, nowSeconds: now)
                var standing = latest
                standing.record(outcome, atSeconds: now)
                cache.store(CertificateChainCache.Entry(chain: chain, ocsp: standing), for: key)
                lock.withLock {
                    checksInFlight[key] = nil
                    outcomeCounts.count(outcome)
                }
                return standing
            }
            checksInFlight[key] = running
            return .wait(running)
        }
        switch next {
        case .wait(let check): return await check.value
        case .settled(let standing): return standing
        }
    }

    /// Both certificates, the intermediate first; GOOD until the earlier end.
    private func checkBoth(of chain: VerifiedChain, nowSeconds: Int64) async -> OCSPStanding.Outcome {
        guard let fetcher else { return .refused(.retryable(reason: "no OCSP fetcher configured")) }
        let checks = [
            OCSPCheck(certificate: chain.intermediate, issuer: chain.root, root: chain.root, nowSeconds: nowSeconds),
            OCSPCheck(certificate: chain.leaf, issuer: chain.intermediate, root: chain.root, nowSeconds: nowSeconds),
        ]
        var validUntilSeconds = Int64.max
        for check in checks {
            do {
                validUntilSeconds = min(validUntilSeconds, try await ask(check, fetcher: fetcher))
            } catch {
                return .refused(error)
            }
        }
        return .good(validUntilSeconds: validUntilSeconds)
    }

    /// Tries each responder the certificate names until one answers usably;
    /// returns until when its GOOD answer holds.
    private func ask(_ check: OCSPCheck, fetcher: any OCSPFetcher) async throws(VerificationFailure) -> Int64 {
        let urls = check.certificate.ocspURLs
        guard !urls.isEmpty else { throw .badChain(reason: "certificate names no OCSP responder") }
        guard let request = check.requestDER() else { throw .retryable(reason: "could not build OCSP request") }
        var lastFailure = VerificationFailure.retryable(reason: "no OCSP responder answered")
        for url in urls {
            let response: [UInt8]
            do {
                response = try await fetcher.fetch(requestDER: request, responderURL: url)
            } catch {
                lastFailure = .retryable(reason: "OCSP fetch failed: \(error.reason)")
                continue
            }
            do {
                return try check.check(responseDER: response)
            } catch {
                // A definite answer (revoked, untrusted) ends the search.
                if !error.isRetryable { throw error }
                lastFailure = error
            }
        }
        throw lastFailure
    }
}
