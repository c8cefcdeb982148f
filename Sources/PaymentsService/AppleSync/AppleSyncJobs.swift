import AppStoreServerAPI
import Foundation
import Logging
import ServiceKit

/// The jobs that ask Apple, started by the service when the App Store
/// Server API is configured; each runs on one instance at a time
/// (`SyncJobRunner`) and is off when its interval is 0:
/// - `notification_recovery:Production` / `:Sandbox` (each environment the
///   deployment accepts): Get Notification History, `NotificationRecovery`;
/// - `reconcile_stuck`: rows stuck owing a step or `received`, `Reconciler.sweepStuck`;
/// - `revoked_sweep`: revocations of credited purchases, `Reconciler.sweepRevoked`.
enum AppleSyncJobs {
    static func start(
        client: AppStoreServerAPIClient, processor: PaymentProcessor, settings: AppleSyncSettings,
        logger: Logger
    ) -> [Task<Void, Never>] {
        let owner = instanceId()
        let runner = SyncJobRunner(store: processor.store, owner: owner, lease: settings.lease, logger: logger)
        let reconciler = Reconciler(client: client, processor: processor, logger: logger)
        let recovery = NotificationRecovery(client: client, processor: processor, logger: logger)
        var tasks: [Task<Void, Never>] = []
        if settings.notificationRecoveryInterval > .zero {
            for environment in reconciler.environments {
                let overlap = settings.notificationRecoveryOverlap
                tasks.append(
                    Task {
                        await runner.run(
                            job: "notification_recovery:\(environment.rawValue)",
                            interval: settings.notificationRecoveryInterval
                        ) { lease, state in
                            await recovery.run(environment: environment, lease: lease, state: state, overlap: overlap)
                        }
                    })
            }
        }
        if settings.reconcileInterval > .zero {
            let stuckAfter = settings.stuckAfter
            tasks.append(
                Task {
                    await runner.run(job: "reconcile_stuck", interval: settings.reconcileInterval) { _, _ in
                        await reconciler.sweepStuck(stuckAfter: stuckAfter)
                    }
                })
        }
        if settings.revokedSweepInterval > .zero {
            let lookbackDays = settings.revokedSweepLookbackDays
            tasks.append(
                Task {
                    await runner.run(job: "revoked_sweep", interval: settings.revokedSweepInterval) { lease, state in
                        await reconciler.sweepRevoked(lease: lease, state: state, lookbackDays: lookbackDays)
                    }
                })
        }
        logger.info("apple sync jobs started", ["instance": owner, "jobs": "\(tasks.count)"])
        return tasks
    }

    /// This process among the service's instances: host, pid and a random part.
    static func instanceId() -> String {
        let host = ProcessInfo.processInfo.hostName.prefix(32)
        return "\(host)-\(getpid())-\(UUID().uuidString.prefix(8).lowercased())"
    }
}
