/// The connection pool's bookkeeping as a pure state machine: no I/O, no
/// clocks. Each event returns the action the owner (`PoolCore`) must carry
/// out, so every rule (bounds, FIFO hand-over, slot accounting after
/// failures) is tested without a database.
struct PoolStateMachine<Connection> {
    typealias WaiterID = UInt64

    enum AcquireAction {
        /// Hand this idle connection to the caller.
        case use(Connection)
        /// A slot is reserved: open a connection for the caller.
        case open
        /// Park the caller under this id until a release or a timeout.
        case wait(WaiterID)
        case failClosed
        case failExhausted(waiting: Int)
    }

    enum ReleaseAction {
        /// Resume this waiter with the connection.
        case handOver(Connection, to: WaiterID)
        /// Kept idle; nothing to do.
        case park
        /// Close the connection; when `openForWaiter`, a slot is reserved to open one for a waiter.
        case discard(openForWaiter: Bool)
    }

    struct ConnectFailure {
        /// The waiter to fail with the connect error, if one was being served.
        let failWaiter: WaiterID?
        /// A slot is reserved: open another connection for the next waiter.
        let openForWaiter: Bool
    }

    let connectionsMax: Int
    let waitersMax: Int
    private(set) var idle: [Connection] = []
    /// Open or opening connections, leased or idle.
    private(set) var openCount = 0
    private(set) var peakOpenCount = 0
    private(set) var isClosed = false
    private var waiting = Set<WaiterID>()
    /// FIFO of waiter ids; ids that left (timeout, cancel) are skipped lazily.
    private var waiterOrder: [WaiterID] = []
    private var waiterOrderStart = 0
    private var nextWaiterID: WaiterID = 0

    init(connectionsMax: Int, waitersMax: Int) {
        precondition(connectionsMax > 0 && waitersMax >= 0)
        self.connectionsMax = connectionsMax
        self.waitersMax = waitersMax
    }

    var waiterCount: Int { waiting.count }

    /// A caller wants a connection; `isUsable` weeds out idle connections found dead.
    mutating func acquire(isUsable: (Connection) -> Bool) -> AcquireAction {
        guard !isClosed else { return .failClosed }
        while let connection = idle.popLast() {
            if isUsable(connection) { return .use(connection) }
            openCount -= 1
        }
        if openCount < connectionsMax {
            reserveSlot()
            return .open
        }
        guard waiting.count < waitersMax else { return .failExhausted(waiting: waiting.count) }
        let id = nextWaiterID
        nextWaiterID += 1
        waiting.insert(id)
        waiterOrder.append(id)
        return .wait(id)
    }

    /// A leased connection comes back (`broken`: it must not be reused).
    /// A broken one also evicts the idle connections: a lost connection
    /// mostly means the server restarted or failed over, and then every
    /// idle one is dead too, which libpq only finds out by using it. Handing
    /// them out one by one would fail as many calls as the pool holds
    /// (more than any caller's retries); opening fresh ones costs a connect.
    mutating func release(_ connection: Connection, broken: Bool) -> ReleaseAction {
        if broken || isClosed {
            openCount -= 1
            if broken {
                openCount -= idle.count
                idle.removeAll()  // the owner closes a connection when it drops it
            }
            return .discard(openForWaiter: reserveSlotForWaiter())
        }
        return handOverOrPark(connection)
    }

    /// A connection opened for a waiter (after `openForWaiter`) is ready.
    mutating func connectionOpenedForWaiter(_ connection: Connection) -> ReleaseAction {
        if isClosed {
            openCount -= 1
            return .discard(openForWaiter: false)
        }
        return handOverOrPark(connection)
    }

    /// Opening a connection failed; its slot is free again.
    mutating func connectFailed(wasForWaiter: Bool) -> ConnectFailure {
        openCount -= 1
        let failed = wasForWaiter ? popFirstWaiter() : nil
        return ConnectFailure(failWaiter: failed, openForWaiter: reserveSlotForWaiter())
    }

    /// A waiter gave up (timeout or cancellation); false if it was already served.
    mutating func waiterLeft(_ id: WaiterID) -> Bool {
        guard waiting.remove(id) != nil else { return false }
        // Its place in `waiterOrder` is skipped when reached; while no
        // connection comes back nothing reaches it, so the order is
        // compacted here too, or it would grow with every timed-out caller.
        if waiterOrder.count - waiterOrderStart > 2 * waiting.count + 1_024 {
            waiterOrder = waiterOrder[waiterOrderStart...].filter { waiting.contains($0) }
            waiterOrderStart = 0
        }
        return true
    }

    /// Entries kept for the waiting order (tests: bounded by the waiters).
    var waiterOrderCount: Int { waiterOrder.count - waiterOrderStart }

    /// Shuts the pool: returns the idle connections to close and the waiters to fail.
    mutating func close() -> (idle: [Connection], waiters: [WaiterID]) {
        isClosed = true
        let closing = idle
        openCount -= idle.count
        idle.removeAll()
        var failing: [WaiterID] = []
        while let id = popFirstWaiter() { failing.append(id) }
        return (closing, failing)
    }

    private mutating func handOverOrPark(_ connection: Connection) -> ReleaseAction {
        if let id = popFirstWaiter() { return .handOver(connection, to: id) }
        idle.append(connection)
        return .park
    }

    private mutating func reserveSlot() {
        openCount += 1
        peakOpenCount = max(peakOpenCount, openCount)
        assert(openCount <= connectionsMax)
    }

    private mutating func reserveSlotForWaiter() -> Bool {
        guard !isClosed, !waiting.isEmpty, openCount < connectionsMax else { return false }
        reserveSlot()
        return true
    }

    private mutating func popFirstWaiter() -> WaiterID? {
        defer { compactWaiterOrder() }
        while waiterOrderStart < waiterOrder.count {
            let id = waiterOrder[waiterOrderStart]
            waiterOrderStart += 1
            if waiting.remove(id) != nil { return id }
        }
        return nil
    }

    private mutating func compactWaiterOrder() {
        if waiterOrderStart == waiterOrder.count {
            waiterOrder.removeAll(keepingCapacity: true)
            waiterOrderStart = 0
        } else if waiterOrderStart > 1_024 && waiterOrderStart * 2 > waiterOrder.count {
            waiterOrder.removeFirst(waiterOrderStart)
            waiterOrderStart = 0
        }
    }
}
