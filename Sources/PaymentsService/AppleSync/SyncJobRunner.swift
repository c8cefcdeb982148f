import Foundation
import Logging
import ServiceKit

/// Runs one job that asks Apple, on whichever instance wins its lease:
/// every instance loops, bounded, looking at the job's schedule; when it is
/// due, one instance takes the lease row (`PaymentsStore.acquireSyncJob`),
/// runs the job, and releases it with the next run's time
/// (`SyncJobSchedule`). A crashed holder's lease expires and another
/// instance runs the job. No PostgreSQL session lock is used: the pool
/// hands out connections per query, and a lease row survives a dropped
/// connection, is visible to operators and fences a stalled holder's writes.
struct SyncJobRunner: Sendable {
    let store: PaymentsStore
    /// This instance (a random id per process).
    let owner: String
    let lease: Duration
    let logger: Logger

    /// Loops until cancelled: `body` runs with the lease held and the job's state.
    func run(
        job: String, interval: Duration,
        body: @escaping @Sendable (SyncJobLease, SyncJobState) async -> SyncJobOutcome
    ) async {
        precondition(interval > .zero, "a job that runs has an interval")
        let handle = SyncJobLease(job: job, owner: owner, duration: lease, store: store)
        while !Task.isCancelled {
            var wait = min(interval, AppleSyncLimits.pollMax)
            do {
                if let state = try await store.acquireSyncJob(job, owner: owner, lease: lease) {
                    let started = ContinuousClock.now
                    let outcome = await Self.holdingLease(handle, logger: logger) { await body(handle, state) }
                    let now = Int64(Date().timeIntervalSince1970 * 1000)
                    if let next = SyncJobSchedule.nextRun(after: outcome, nowMilliseconds: now, interval: interval) {
                        _ = try await store.finishSyncJob(
                            job, owner: owner, nextRunAtMilliseconds: next, outcome: outcome.label)
                    }
                    var fields = [
                        "job": job, "outcome": outcome.label,
                        "duration_ms": "\((ContinuousClock.now - started).wholeMilliseconds)",
                    ]
                    if case .rateLimited(let retryAfter) = outcome {
                        fields["retry_after_ms"] =
                            "\((retryAfter ?? SyncJobSchedule.rateLimitedWait).wholeMilliseconds)"
                    }
                    switch outcome {
                    case .completed, .moreToDo: logger.info("apple sync job run", fields)
                    case .rateLimited, .failed, .lostLease: logger.warning("apple sync job run did not finish", fields)
                    }
                }
                wait = min(
                    max(try await store.syncJobDueIn(job), .milliseconds(100)), min(interval, AppleSyncLimits.pollMax))
            } catch {
                logger.warning("apple sync job cannot reach its schedule", ["job": job, "error": "\(error)"])
            }
            try? await Task.sleep(for: wait)
        }
    }

    /// Runs `body` while a heartbeat renews the lease every third of its
    /// duration, so one long call to Apple (retries and a `Retry-After`
    /// wait can take minutes) never lets the lease run out under a live
    /// holder and a second instance run the job beside it. A holder that
    /// stops (crashed, hung) stops renewing, and its lease runs out as
    /// before. When a renewal finds the lease taken over, `body` is
    /// cancelled (its writes are fenced anyway) and the run ends `lostLease`.
    static func holdingLease(
        _ lease: SyncJobLease, logger: Logger,
        _ body: @escaping @Sendable () async -> SyncJobOutcome
    ) async -> SyncJobOutcome {
        await withTaskGroup(of: SyncJobOutcome?.self) { group in
            group.addTask { await body() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: lease.duration / 3)
                    if Task.isCancelled { break }
                    // A failed renewal (the database) is tried again next beat.
                    if (try? await lease.renew()) == false {
                        logger.warning("apple sync job lease taken over during the run", ["job": lease.job])
                        return nil
                    }
                }
                return nil
            }
            var result: SyncJobOutcome?
            while let finished = await group.next() {
                // The first to finish: the body (its outcome), or the heartbeat (lease lost).
                group.cancelAll()
                if result == nil { result = finished ?? .lostLease }
            }
            return result ?? .lostLease
        }
    }
}
