/// Which items run together: the writes of one group commit
/// (`CommitBatcher` in ServiceKitDatabase) or the reads one call carries
/// (the gateway's `BalanceReadBatcher`). Pure: the owner feeds it events
/// and carries out the actions.
///
/// An item starts at once while no batch runs, so a lone item waits for
/// nobody. While some run but fewer than `batchesInFlightMax`, a further
/// batch starts once `extraBatchWaitingMin` items wait (1: at once), so
/// that under load a second statement overlaps the first without cutting
/// the batches small. Otherwise it waits, and when a batch
/// ends the next one takes the waiting items in arrival order, up to
/// `batchSizeMax`, leaving for a later batch any item that shares a key
/// with one already in it (for writes, the rows it writes: an account, an
/// event id, a transaction id): one statement then touches each row once,
/// and a row's writes keep their order. Items with no keys (reads) never
/// exclude each other. When `waitingMax` items already wait, an item is
/// told to run alone (the pool's own limits then apply), so the queue is
/// bounded and never refuses.
public struct BatchQueue<Item> {
    /// What the owner does after an event.
    public enum Action {
        /// Run these together, now (one statement, one call).
        case run([Item])
        /// The item waits for a batch to end.
        case wait
        /// The queue is full: run this item on its own.
        case runAlone(Item)
        /// Nothing to start.
        case none
    }

    public let batchSizeMax: Int
    public let batchesInFlightMax: Int
    public let waitingMax: Int
    /// Items that must wait before a batch beyond the first starts.
    public let extraBatchWaitingMin: Int
    /// The rows an item writes; two items sharing one never share a batch.
    private let keys: (Item) -> [String]
    private var waiting: [Item] = []
    public private(set) var batchesInFlight = 0

    public init(
        batchSizeMax: Int, batchesInFlightMax: Int, waitingMax: Int, extraBatchWaitingMin: Int = 1,
        keys: @escaping (Item) -> [String]
    ) {
        precondition(batchSizeMax >= 1 && batchesInFlightMax >= 1 && waitingMax >= 0 && extraBatchWaitingMin >= 1)
        self.batchSizeMax = batchSizeMax
        self.batchesInFlightMax = batchesInFlightMax
        self.waitingMax = waitingMax
        self.extraBatchWaitingMin = extraBatchWaitingMin
        self.keys = keys
    }

    public var waitingCount: Int { waiting.count }

    /// A write arrives: it takes a free slot (and starts alone, at once)
    /// if there is one. True when it did; the owner runs it as a batch of
    /// one and then calls `batchFinished`.
    public mutating func startIfSlotFree() -> Bool {
        guard batchesInFlight < batchesInFlightMax, batchesInFlight == 0 || extraBatchWaitingMin == 1 else {
            return false
        }
        // A slot a write may take at once means nothing waits (a slot that
        // frees takes the waiting writes first).
        assert(waiting.isEmpty, "writes wait while a batch slot is free")
        batchesInFlight += 1
        return true
    }

    /// A write arrives (or arrives again after `startIfSlotFree` found no slot).
    public mutating func submit(_ item: Item) -> Action {
        if startIfSlotFree() { return .run([item]) }
        guard waiting.count < waitingMax else { return .runAlone(item) }
        waiting.append(item)
        if batchesInFlight < batchesInFlightMax && waiting.count >= extraBatchWaitingMin { return startWaiting() }
        return .wait
    }

    /// A batch ended (whatever its outcome): its slot goes to the waiting writes.
    public mutating func batchFinished() -> Action {
        precondition(batchesInFlight > 0, "a batch finished that never started")
        batchesInFlight -= 1
        guard !waiting.isEmpty, batchesInFlight == 0 || waiting.count >= extraBatchWaitingMin else { return .none }
        return startWaiting()
    }

    /// The next batch from the waiting items, in a slot it takes now.
    private mutating func startWaiting() -> Action {
        var batch: [Item] = []
        var taken = Set<String>()
        var left: [Item] = []
        for item in waiting {
            let itemKeys = keys(item)
            if batch.count < batchSizeMax && itemKeys.allSatisfy({ !taken.contains($0) }) {
                taken.formUnion(itemKeys)
                batch.append(item)
            } else {
                left.append(item)
            }
        }
        waiting = left
        batchesInFlight += 1
        return .run(batch)
    }
}
