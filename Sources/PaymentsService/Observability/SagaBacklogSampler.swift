import Logging
import Metrics
import ServiceKit

/// Counts the saga's backlog now and then (`iap_saga_stuck_rows{step}` past
/// `SAGA_STUCK_AFTER_SECONDS`, `iap_saga_oldest_owed_step_age_seconds`): one
/// grouped query per interval, whatever the traffic. A failed query keeps
/// the last values (the database alert says why).
enum SagaBacklogSampler {
    static let interval = Duration.seconds(15)

    static func start(store: PaymentsStore, metrics: PaymentsMetrics, stuckAfter: Duration, logger: Logger) -> Task<
        Void, Never
    > {
        Task {
            while !Task.isCancelled {
                do {
                    let owed = try await store.owedSteps(stuckAfter: stuckAfter)
                    metrics.updateStuck(
                        rows: labelled(owed.stuckRows), oldestOwedStepAgeSeconds: owed.oldestOwedSeconds)
                } catch {
                    logger.debug("saga backlog not sampled", ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    static func labelled(_ rows: [PaymentsStore.LedgerStepKind: Int]) -> [SagaStepLabel: Int] {
        var labelled: [SagaStepLabel: Int] = [:]
        for (kind, count) in rows {
            switch kind {
            case .grant: labelled[.grant] = count
            case .clawback: labelled[.clawback] = count
            case .reverseClawback: labelled[.reversal] = count
            }
        }
        return labelled
    }
}
