import ServiceKit

/// `BalanceReadBatcher`'s bookkeeping, pure: the `BatchQueue` of waiting
/// reads, when each call holding a slot started, and whether the watchdog
/// runs. A call holds its slot until it ends or until it has held it for
/// `holdMax`, whichever comes first; the watchdog hands on the slots of
/// calls past `holdMax` (each slot once), so one slow call never holds up
/// the reads behind it for long. One watchdog at most, and only while some
/// call holds a slot: no timer per call.
struct CallSlots<Item> {
    /// Names one call that holds a slot.
    typealias CallID = UInt64

    /// What the owner does next.
    enum Step {
        /// Make one call for these items; it holds slot `call`.
        case call([Item], CallID)
        /// The queue is full: this item makes its own call, outside the slots.
        case alone(Item)
        /// Nothing to start.
        case none
    }

    let holdMax: Duration
    private var queue: BatchQueue<Item>
    private var started: [CallID: ContinuousClock.Instant] = [:]
    private var nextCall: CallID = 0
    private(set) var watchdogRunning = false

    init(holdMax: Duration, batchSizeMax: Int, batchesInFlightMax: Int, waitingMax: Int) {
        self.holdMax = holdMax
        queue = BatchQueue(batchSizeMax: batchSizeMax, batchesInFlightMax: batchesInFlightMax, waitingMax: waitingMax) {
            _ in []
        }
    }

    var waitingCount: Int { queue.waitingCount }
    /// Calls that hold a slot now.
    var callsHoldingSlots: Int { started.count }

    /// A lone item takes a free slot, if there is one: its call's id.
    mutating func takeFreeSlot(now: ContinuousClock.Instant) -> CallID? {
        guard queue.startIfSlotFree() else { return nil }
        return register(now)
    }

    /// An item that found no free slot (or any item) joins the queue.
    mutating func submit(_ item: Item, now: ContinuousClock.Instant) -> Step {
        step(queue.submit(item), now)
    }

    /// Call `id` ended: its slot goes to the waiting items, unless the
    /// watchdog handed it on already.
    mutating func callEnded(_ id: CallID, now: ContinuousClock.Instant) -> Step {
        guard started.removeValue(forKey: id) != nil else { return .none }
        return step(queue.batchFinished(), now)
    }

    /// True once when a watchdog should start: a call holds a slot and
    /// none runs. The owner then runs one until `watchdogWoke` says stop.
    mutating func claimWatchdogStart() -> Bool {
        guard !watchdogRunning, !started.isEmpty else { return false }
        watchdogRunning = true
        return true
    }

    /// The watchdog woke: the slots of calls past `holdMax` are handed on
    /// (the steps to carry out), and when to wake next; nil when no call
    /// holds a slot (the watchdog stops).
    mutating func watchdogWoke(now: ContinuousClock.Instant) -> (steps: [Step], wakeAt: ContinuousClock.Instant?) {
        var steps: [Step] = []
        for (id, startedAt) in started where now - startedAt >= holdMax {
            started.removeValue(forKey: id)
            steps.append(step(queue.batchFinished(), now))
        }
        guard let oldest = started.values.min() else {
            watchdogRunning = false
            return (steps, nil)
        }
        return (steps, oldest + holdMax)
    }

    private mutating func register(_ now: ContinuousClock.Instant) -> CallID {
        nextCall &+= 1
        started[nextCall] = now
        return nextCall
    }

    private mutating func step(_ action: BatchQueue<Item>.Action, _ now: ContinuousClock.Instant) -> Step {
        switch action {
        case .run(let items): return .call(items, register(now))
        case .runAlone(let item): return .alone(item)
        case .wait, .none: return .none
        }
    }
}

extension CallSlots.Step: Sendable where Item: Sendable {}
