import AppStoreServerAPI
import Foundation
import UUIDText

/// The two reconciliation jobs: rows stuck owing a step or `received`
/// (Get Transaction Info each), and a daily sweep of revocations (Get
/// Transaction History with `revoked=true`, per user with credited
/// purchases), each recording Apple's view through the same model.
extension Reconciler {
    /// Rows no older than this are swept (Apple's history keeps 180 days
    /// of notifications; a purchase older than that is settled by now).
    static let stuckRowAgeDaysMax = 180

    /// One run of the stuck-row sweep: at most
    /// `AppleSyncLimits.stuckRowsPerRunMax` rows that owed a step or stayed
    /// `received` for longer than `stuckAfter`, each asked about at most once
    /// per `stuckAfter`. A failure of one row (`Failure.concernsOnlyThisItem`)
    /// is logged and the sweep moves on; a rate limit or any other failure
    /// stops the run, and the rows not asked about yet are released to the
    /// next run.
    func sweepStuck(stuckAfter: Duration) async -> SyncJobOutcome {
        let rows: [PaymentRecord]
        do {
            rows = try await processor.store.claimStuckRows(
                stuckAfter: stuckAfter, maximumAgeDays: Self.stuckRowAgeDaysMax,
                limit: AppleSyncLimits.stuckRowsPerRunMax)
        } catch {
            return .failed(reason: error.reason.rawValue)
        }
        var failures = 0
        // The runner's heartbeat holds the lease meanwhile (`SyncJobRunner.holdingLease`).
        for (index, row) in rows.enumerated() {
            do {
                _ = try await reconcile(transactionId: row.transactionId, requestId: "reconcile-stuck")
            } catch  where !error.concernsOnlyThisItem {
                // Not this row's fault (Apple limiting or unavailable, the
                // key, TLS, our database): stop, and the rows not asked
                // about yet are due at the next run, not a threshold later.
                let unasked = rows[index...].map(\.transactionId)
                logger.warning("stuck-row sweep stopped", ["rows_left": "\(unasked.count)", "error": "\(error)"])
                _ = try? await processor.store.releaseStuckRows(transactionIds: unasked)
                return error.isRateLimited
                    ? .rateLimited(retryAfter: error.retryAfter) : .failed(reason: "reconcile of a stuck row")
            } catch {
                failures += 1
                logger.warning("stuck row not reconciled", ["transaction_id": row.transactionId, "error": "\(error)"])
            }
        }
        if !rows.isEmpty {
            logger.notice(
                "stuck rows reconciled with Apple's view", ["rows": "\(rows.count)", "failures": "\(failures)"])
        }
        return rows.count == AppleSyncLimits.stuckRowsPerRunMax ? .moreToDo : .completed
    }

    /// One run of the revoked sweep: for the next
    /// `AppleSyncLimits.sweepUsersPerRunMax` users (by id, after the stored
    /// cursor) with purchases credited within `lookbackDays`, read the
    /// customer's revoked consumables (Get Transaction History,
    /// `revoked=true`, `startDate` at the lookback) in each environment and
    /// record each as Apple's word: a refund whose notification never
    /// arrived is clawed back. The cursor moves after each user; when no
    /// user is left the sweep is complete (cursor cleared) and starts over
    /// after the interval. A failure that concerns one user or one
    /// transaction only (`Failure.concernsOnlyThisItem`) is logged and
    /// skipped; any other stops the run, and the next starts at that user.
    func sweepRevoked(lease: SyncJobLease, state: SyncJobState, lookbackDays: Int) async -> SyncJobOutcome {
        let cursor = state.cursor.flatMap(UUID.init(uuidString:))
        let anchors: [PaymentsStore.SweepAnchor]
        do {
            anchors = try await processor.store.sweepAnchors(
                after: cursor, lookbackDays: lookbackDays, limit: AppleSyncLimits.sweepUsersPerRunMax)
        } catch {
            return .failed(reason: error.reason.rawValue)
        }
        let users = Dictionary(grouping: anchors, by: \.userId).sorted {
            UUIDText.lowercased($0.key) < UUIDText.lowercased($1.key)
        }
        var recorded = 0, skipped = 0
        for (user, anchors) in users {
            for anchor in anchors {
                do {
                    let swept = try await sweepRevoked(anchor, user: user, lookbackDays: lookbackDays)
                    recorded += swept.recorded
                    skipped += swept.skipped
                } catch  where error.isRateLimited {
                    return .rateLimited(retryAfter: error.retryAfter)
                } catch  where error.concernsOnlyThisItem {
                    skipped += 1
                    logger.error(
                        "revoked sweep skipped a user whose history cannot be read",
                        [
                            "user_id": UUIDText.lowercased(user), "environment": anchor.environment,
                            "error": "\(error)",
                        ])
                } catch {
                    logger.warning(
                        "revoked sweep could not read a user's history",
                        [
                            "user_id": UUIDText.lowercased(user), "environment": anchor.environment,
                            "error": "\(error)",
                        ])
                    return .failed(reason: "history of one user")
                }
            }
            do {
                guard try await lease.saveCursor(UUIDText.lowercased(user)) else { return .lostLease }
            } catch {
                return .failed(reason: error.reason.rawValue)
            }
        }
        logger.notice(
            "revoked sweep",
            [
                "users": "\(users.count)", "revoked_transactions_recorded": "\(recorded)",
                "skipped": "\(skipped)", "after_user": state.cursor ?? "",
            ])
        guard users.count < AppleSyncLimits.sweepUsersPerRunMax else { return .moreToDo }
        do {
            return try await lease.saveCursor(nil) ? .completed : .lostLease
        } catch {
            return .failed(reason: error.reason.rawValue)
        }
    }

    /// The customer's revoked consumables since the lookback, in the
    /// anchor's environment, each recorded: how many were, and how many
    /// were skipped (a transaction that cannot be recorded, for a reason
    /// that concerns it only, is logged and the others still are).
    /// Newest changes first (`sort=DESCENDING`), so that a history longer
    /// than `AppleSyncLimits.historyPagesMax` pages loses its oldest
    /// revocations, not the ones most likely still unknown here; a history
    /// cut there is logged.
    private func sweepRevoked(_ anchor: PaymentsStore.SweepAnchor, user: UUID, lookbackDays: Int)
        async throws(Failure) -> (recorded: Int, skipped: Int)
    {
        guard let environment = AppStoreServerEnvironment(rawValue: anchor.environment) else { return (0, 0) }
        let startDate =
            Int64(Date().timeIntervalSince1970 * 1000) - Int64(lookbackDays)
            * NotificationRecoveryWindow.dayMilliseconds
        let history: PagedResult<String>
        do {
            history = try await client.allTransactionHistory(
                transactionId: anchor.transactionId,
                query: TransactionHistoryQuery(
                    startDate: startDate, productTypes: [.consumable], sort: .descending, revoked: true),
                environment: environment, pagesMax: AppleSyncLimits.historyPagesMax)
        } catch  where error.isNotFound {
            return (0, 0)
        } catch {
            throw .apple(error)
        }
        if !history.isComplete {
            logger.warning(
                "revoked sweep read only the newest part of a user's history",
                [
                    "user_id": UUIDText.lowercased(user), "environment": anchor.environment,
                    "pages": "\(history.pageCount)",
                ])
        }
        var recorded = 0, skipped = 0
        for signed in history.items {
            do {
                _ = try await record(signed: signed, from: environment, requestId: "revoked-sweep")
                recorded += 1
            } catch  where error.concernsOnlyThisItem {
                skipped += 1
                logger.error(
                    "revoked sweep skipped a transaction it cannot record",
                    [
                        "user_id": UUIDText.lowercased(user), "environment": anchor.environment, "error": "\(error)",
                    ])
            }
        }
        return (recorded, skipped)
    }
}
