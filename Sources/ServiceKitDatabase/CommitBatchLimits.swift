/// The bounds of one `CommitBatcher`.
public struct CommitBatchLimits: Sendable {
    /// Writes one statement carries at most.
    public var batchSizeMax = 64
    /// Writes waiting for a batch; one more runs on its own.
    public var waitingMax = 4_096
    /// Batches running at once.
    public var batchesInFlightMax: Int

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
}
