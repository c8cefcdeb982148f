/// How a run of a job that asks Apple ended.
enum SyncJobOutcome: Equatable, Sendable {
    /// Everything due was done: the next run is one interval away.
    case completed
    /// A bound stopped the run with work left (pages, rows, users): go on soon.
    case moreToDo
    /// Apple answered 429: not before it said (`Retry-After`), or a minute.
    case rateLimited(retryAfter: Duration?)
    /// Apple or our side failed in a way a later run may not.
    case failed(reason: String)
    /// Another instance took the lease over (this one stalled past it): it
    /// schedules the job now; this run writes nothing more.
    case lostLease

    /// For `apple_sync_jobs.last_outcome` and the logs.
    var label: String {
        switch self {
        case .completed: "completed"
        case .moreToDo: "more_to_do"
        case .rateLimited: "rate_limited"
        case .failed(let reason):
            "failed: \(reason)".count <= 64 ? "failed: \(reason)" : String("failed: \(reason)".prefix(64))
        case .lostLease: "lost_lease"
        }
    }
}

/// When a job runs next, from how its last run ended. Pure.
enum SyncJobSchedule {
    /// Without a `Retry-After`, a rate-limited job waits this long.
    static let rateLimitedWait: Duration = .seconds(60)

    /// UNIX ms of the next run, or nil after `lostLease` (the new holder decides).
    static func nextRun(after outcome: SyncJobOutcome, nowMilliseconds now: Int64, interval: Duration) -> Int64? {
        precondition(interval > .zero, "a job that runs has an interval")
        switch outcome {
        case .completed:
            return now + interval.wholeMilliseconds
        case .moreToDo:
            return now + min(AppleSyncLimits.continueAfter, interval).wholeMilliseconds
        case .rateLimited(let retryAfter):
            // Never earlier than Apple asked, even when that is past the interval.
            return now + max(retryAfter ?? rateLimitedWait, AppleSyncLimits.continueAfter).wholeMilliseconds
        case .failed:
            return now + min(interval, AppleSyncLimits.retryAfterFailure).wholeMilliseconds
        case .lostLease:
            return nil
        }
    }
}
