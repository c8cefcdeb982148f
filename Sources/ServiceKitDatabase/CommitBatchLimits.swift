/// The bounds of one `CommitBatcher`.
public struct CommitBatchLimits: Sendable {
    /// Writes one statement carries at most.
    public var batchSizeMax = 64
    /// Writes waiting for a batch; one more runs on its own.
    public var waitingMax = 4_096
    /// Batches running at once.
    public var batchesInFlightMax: Int

    /// A quarter of the pool's connections, 1...4, run batches: the other
    /// commands always find connections, and under load the writes queue
    /// up and commit together instead of one by one.
    public init(connectionsMax: Int) {
        batchesInFlightMax = min(4, max(1, connectionsMax / 4))
    }
}
