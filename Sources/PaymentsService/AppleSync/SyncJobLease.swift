/// The lease one run of a job holds (`apple_sync_jobs`): every write it
/// makes is fenced by `owner`, and each one renews the lease. A write that
/// returns false means another instance took the job over: stop at once.
struct SyncJobLease: Sendable {
    let job: String
    let owner: String
    let duration: Duration
    let store: PaymentsStore

    func renew() async throws(PaymentsError) -> Bool {
        try await store.renewSyncJob(job, owner: owner, lease: duration)
    }

    func saveWindow(_ window: NotificationRecoveryWindow?, pageToken: String?) async throws(PaymentsError) -> Bool {
        try await store.saveSyncWindow(job, owner: owner, window: window, pageToken: pageToken, lease: duration)
    }

    func completeWindow(resumeMilliseconds: Int64) async throws(PaymentsError) -> Bool {
        try await store.completeSyncWindow(job, owner: owner, resumeMilliseconds: resumeMilliseconds)
    }

    func saveCursor(_ cursor: String?) async throws(PaymentsError) -> Bool {
        try await store.saveSyncCursor(job, owner: owner, cursor: cursor, lease: duration)
    }
}
