import Foundation

/// Which writes (regular grants) run together (group commit). Pure: the
/// batcher (`CommitBatcher`) owns one, feeds it events and carries out the
/// actions.
///
/// A write starts at once while fewer than `batchesInFlightMax` batches run,
/// so a lone write waits for nobody. Otherwise it waits, and when a batch
/// ends the next one takes the waiting writes in arrival order, up to
/// `batchSizeMax`, leaving for a later batch any write whose user or event id
/// is already in it: one statement touches an account row once (and a
/// user's writes keep their order), and an event id twice in one statement
/// would fail all of it. When `waitingMax` writes already wait, a write is
/// told to run alone (the pool's own limits then apply), so the queue is
/// bounded and never refuses.
struct CommitBatchQueue<Item> {
    /// What identifies an item's account row and ledger row.
    /// What the owner does after an event.
    enum Action {
        /// Run these together, now (one statement, one commit).
        case run([Item])
        /// The item waits for a batch to end.
        case wait
        /// The queue is full: run this item on its own.
        case runAlone(Item)
        /// Nothing to start.
        case none
    }

    let batchSizeMax: Int
    let batchesInFlightMax: Int
    let waitingMax: Int
    private let keys: (Item) -> CommitBatchKeys
    private var waiting: [Item] = []
    private(set) var batchesInFlight = 0

    init(batchSizeMax: Int, batchesInFlightMax: Int, waitingMax: Int, keys: @escaping (Item) -> CommitBatchKeys) {
        precondition(batchSizeMax >= 1 && batchesInFlightMax >= 1 && waitingMax >= 0)
        self.batchSizeMax = batchSizeMax
        self.batchesInFlightMax = batchesInFlightMax
        self.waitingMax = waitingMax
        self.keys = keys
    }

    var waitingCount: Int { waiting.count }

    /// A write arrives: it takes a free slot (and starts alone, at once)
    /// if there is one. True when it did; the owner runs it as a batch of
    /// one and then calls `batchFinished`.
    mutating func startIfSlotFree() -> Bool {
        guard batchesInFlight < batchesInFlightMax else { return false }
        // A free slot means nothing waits (a slot that frees takes the
        // waiting writes first).
        assert(waiting.isEmpty, "writes wait while a batch slot is free")
        batchesInFlight += 1
        return true
    }

    /// A write arrives (or arrives again after `startIfSlotFree` found no slot).
    mutating func submit(_ item: Item) -> Action {
        if startIfSlotFree() { return .run([item]) }
        guard waiting.count < waitingMax else { return .runAlone(item) }
        waiting.append(item)
        return .wait
    }

    /// A batch ended (whatever its outcome): its slot goes to the waiting writes.
    mutating func batchFinished() -> Action {
        precondition(batchesInFlight > 0, "a batch finished that never started")
        batchesInFlight -= 1
        guard !waiting.isEmpty else { return .none }
        var batch: [Item] = []
        var users = Set<UUID>()
        var events = Set<String>()
        var left: [Item] = []
        for item in waiting {
            let itemKeys = keys(item)
            if batch.count < batchSizeMax && !users.contains(itemKeys.user) && !events.contains(itemKeys.event) {
                users.insert(itemKeys.user)
                events.insert(itemKeys.event)
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

/// What identifies a batched write's account row and ledger row.
struct CommitBatchKeys {
    let user: UUID
    let event: String
}
