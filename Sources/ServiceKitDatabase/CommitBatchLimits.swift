/// The bounds of one `CommitBatcher`.
public struct CommitBatchLimits: Sendable {
    /// Writes one statement carries at most.
    public var batchSizeMax = 64
    /// Writes waiting for a batch; one more runs on its own.
    public var waitingMax = 4_096
    /// Batches running at once.
    public var batchesInFlightMax: Int
    /// Writes that must wait before a batch beyond the first starts (1: at once; `BatchQueue`).
    public var extraBatchWaitingMin = 1

    /// One batch at a time for pools up to 31 connections, one more per 16
    /// connections above, at most 4: the other commands always find
    /// connections, and under load the writes queue up and commit together
    /// instead of one by one. Fewer batches in flight make bigger batches:
    /// with a pool of 16 on two cores, one batch in flight carried 1.00 and
    /// 1.09 of pgbench's rate in grants where four carried 0.56 and 0.71
    /// (docs/PERFORMANCE.md, "Group commit of regular grants").
    public init(connectionsMax: Int) {
        batchesInFlightMax = min(4, max(1, connectionsMax / 16))
    }

    /// Like `init(connectionsMax:)`, and from 8 connections a second batch
    /// may run beside the first once 6 writes wait: for writes whose
    /// statement waits on its commit's flush more than it works, so one
    /// batch's flush overlaps the next one's work without cutting the
    /// batches small (a second batch that started at once carried half as
    /// many). Spends at 16 clients, alternating: 0.84–0.97 of pgbench's rate
    /// against 0.60–0.80 with one batch in flight; 0.74–1.02 over seven runs
    /// (docs/PERFORMANCE.md, "Session 12"). Grants gained nothing from it.
    public static func overlapping(connectionsMax: Int) -> CommitBatchLimits {
        var limits = CommitBatchLimits(connectionsMax: connectionsMax)
        if connectionsMax >= 8 {
            limits.batchesInFlightMax = max(2, limits.batchesInFlightMax)
            limits.extraBatchWaitingMin = 6
        }
        return limits
    }
}
