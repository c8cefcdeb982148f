import Foundation

/// A bounded pool of PostgreSQL connections: at most `maxConnections` open,
/// at most `maxWaiters` callers queued (FIFO), each waiting at most
/// `acquireTimeoutMilliseconds`. Lost connections are dropped and replaced on
/// demand, so the service recovers by itself after a database restart.
public final class PostgresPool: Sendable {
    public let configuration: Configuration
    private let core: PoolCore
    private var health: HealthFlag { core.health }

    /// Counters for tests, health pages and benchmarks.
    public struct Statistics: Sendable {
        public let openConnections: Int
        public let idleConnections: Int
        public let waiters: Int
        public let peakOpenConnections: Int
    }

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.core = PoolCore(configuration: configuration)
    }

    /// The outcome of the last connection attempt or lease: false after a
    /// failed connect or a lost connection, true after a successful connect.
    /// Costs no round trip; `probe()` refreshes it with one.
    public var isHealthy: Bool { health.value }

    public var statistics: Statistics {
        get async { await core.statistics }
    }

    /// Fails every waiter and closes idle connections; leased ones close on return.
    public func close() async { await core.close() }

    /// Leases a connection for `body` and returns it afterwards (a broken one is discarded).
    @discardableResult
    public func withConnection<Value>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        let connection = try await core.acquire()
        let outcome: Result<Value, any Error>
        do {
            outcome = .success(try await body(connection))
        } catch {
            outcome = .failure(error)
        }
        await core.release(connection)
        return try outcome.get()
    }

    /// Runs `body` inside BEGIN ... COMMIT; any throw rolls back. A COMMIT
    /// that finds the transaction aborted throws `transactionAborted`.
    /// BEGIN on a connection found dead is retried on a fresh one (BEGIN has no effect to repeat).
    @discardableResult
    public func withTransaction<Value>(
        isolation: isolated (any Actor)? = #isolation,
        _ level: PostgresIsolationLevel = .readCommitted,
        _ body: (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        var beginAttempts = 0
        while true {
            let connection = try await core.acquire()
            do {
                try await connection.execute("BEGIN ISOLATION LEVEL \(level.rawValue)")
            } catch {
                await core.release(connection)
                beginAttempts += 1
                if error.isConnectionLoss && beginAttempts <= configuration.maxConnections { continue }
                throw error
            }
            let outcome: Result<Value, any Error>
            do {
                let value = try await body(connection)
                let tag = try await connection.execute("COMMIT").commandTag
                outcome = tag == "COMMIT"
                    ? .success(value)
                    : .failure(PostgresError(code: .transactionAborted, message: "transaction was aborted and rolled back"))
            } catch {
                if !connection.isBroken {
                    do { try await connection.execute("ROLLBACK") } catch { connection.markBroken() }
                }
                outcome = .failure(error)
            }
            await core.release(connection)
            return try outcome.get()
        }
    }

    /// One `select 1` round trip; updates and returns `isHealthy`.
    @discardableResult
    public func probe() async -> Bool {
        do {
            try await withConnection { connection in _ = try await connection.query("select 1") }
            health.set(true)
        } catch {
            health.set(false)
        }
        return health.value
    }

}

/// The pool's mutable state: idle connections, open count, FIFO of waiters.
/// Only `PostgresPool` talks to it.
actor PoolCore {
    nonisolated let configuration: PostgresPool.Configuration

    private struct Waiter {
        let continuation: CheckedContinuation<Result<PostgresConnection, PostgresError>, Never>
        let timeoutTask: Task<Void, Never>
    }

    private var idle: [PostgresConnection] = []
    /// Open or opening connections, leased or idle.
    private var openCount = 0
    private var peakOpenCount = 0
    private var waiters: [UInt64: Waiter] = [:]
    /// FIFO of waiter ids; ids already served or expired are skipped.
    private var waiterOrder: [UInt64] = []
    private var waiterOrderStart = 0
    private var nextWaiterID: UInt64 = 0
    private var isClosed = false
    nonisolated let health = HealthFlag()

    init(configuration: PostgresPool.Configuration) {
        self.configuration = configuration
    }

    var statistics: PostgresPool.Statistics {
        PostgresPool.Statistics(openConnections: openCount, idleConnections: idle.count, waiters: waiters.count, peakOpenConnections: peakOpenCount)
    }

    /// Fails every waiter and closes idle connections; leased ones close on return.
    func close() {
        isClosed = true
        for (_, waiter) in waiters {
            waiter.timeoutTask.cancel()
            waiter.continuation.resume(returning: .failure(PostgresError(code: .poolClosed, message: "pool closed")))
        }
        waiters.removeAll()
        waiterOrder.removeAll()
        waiterOrderStart = 0
        openCount -= idle.count
        idle.removeAll()
    }

    // MARK: Leasing

    func acquire() async throws(PostgresError) -> PostgresConnection {
        guard !isClosed else { throw PostgresError(code: .poolClosed, message: "pool closed") }
        while let connection = idle.popLast() {
            if !connection.isBroken { return connection }
            openCount -= 1
        }
        if openCount < configuration.maxConnections {
            reserveSlot()
            return try await openReservedConnection()
        }
        guard waiters.count < configuration.maxWaiters else {
            throw PostgresError(code: .poolExhausted, message: "\(waiters.count) callers already wait for a connection")
        }
        return try await waitForConnection()
    }

    func release(_ connection: PostgresConnection) {
        if connection.isBroken || isClosed {
            if connection.isBroken { health.set(false) }
            openCount -= 1
            openConnectionForWaiterIfPossible()
            return
        }
        hand(connection)
    }

    private func reserveSlot() {
        openCount += 1
        peakOpenCount = max(peakOpenCount, openCount)
    }

    private func openReservedConnection() async throws(PostgresError) -> PostgresConnection {
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration)
            health.set(true)
            return connection
        } catch {
            openCount -= 1
            health.set(false)
            openConnectionForWaiterIfPossible()
            throw error
        }
    }

    private func waitForConnection() async throws(PostgresError) -> PostgresConnection {
        let id = nextWaiterID
        nextWaiterID += 1
        let timeoutMilliseconds = configuration.acquireTimeoutMilliseconds
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<PostgresConnection, PostgresError>, Never>) in
                // Runs on the actor: a cancellation before this point is seen here,
                // one after it finds the registered waiter.
                if Task.isCancelled {
                    continuation.resume(returning: .failure(Self.cancelledError))
                    return
                }
                let timeoutTask = Task { [weak self] in
                    try? await Task.sleep(for: .milliseconds(timeoutMilliseconds))
                    guard !Task.isCancelled else { return }
                    await self?.removeWaiter(id, failingWith: PostgresError(
                        code: .timeout, message: "no connection within \(timeoutMilliseconds) ms"))
                }
                waiters[id] = Waiter(continuation: continuation, timeoutTask: timeoutTask)
                waiterOrder.append(id)
            }
        } onCancel: {
            Task { await self.removeWaiter(id, failingWith: Self.cancelledError) }
        }
        return try result.get()
    }

    private static let cancelledError = PostgresError(code: .cancelled, message: "the task waiting for a connection was cancelled")

    private func removeWaiter(_ id: UInt64, failingWith error: PostgresError) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.timeoutTask.cancel()
        waiter.continuation.resume(returning: .failure(error))
    }

    private func popFirstWaiter() -> Waiter? {
        while waiterOrderStart < waiterOrder.count {
            let id = waiterOrder[waiterOrderStart]
            waiterOrderStart += 1
            if let waiter = waiters.removeValue(forKey: id) {
                compactWaiterOrder()
                return waiter
            }
        }
        compactWaiterOrder()
        return nil
    }

    private func compactWaiterOrder() {
        if waiterOrderStart == waiterOrder.count {
            waiterOrder.removeAll(keepingCapacity: true)
            waiterOrderStart = 0
        } else if waiterOrderStart > 1_024 && waiterOrderStart * 2 > waiterOrder.count {
            waiterOrder.removeFirst(waiterOrderStart)
            waiterOrderStart = 0
        }
    }

    /// Gives a healthy connection to the longest waiter, or parks it.
    private func hand(_ connection: PostgresConnection) {
        if let waiter = popFirstWaiter() {
            waiter.timeoutTask.cancel()
            waiter.continuation.resume(returning: .success(connection))
        } else {
            idle.append(connection)
        }
    }

    /// After a slot frees up (connection lost or connect failed), opens a
    /// connection for a waiter; a failed attempt fails that waiter rather than
    /// leaving it to time out.
    private func openConnectionForWaiterIfPossible() {
        guard !isClosed, !waiters.isEmpty, openCount < configuration.maxConnections else { return }
        reserveSlot()
        Task { await self.openForWaiter() }
    }

    private func openForWaiter() async {
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration)
            health.set(true)
            if isClosed {
                openCount -= 1
            } else {
                hand(connection)
            }
        } catch {
            openCount -= 1
            health.set(false)
            if let waiter = popFirstWaiter() {
                waiter.timeoutTask.cancel()
                waiter.continuation.resume(returning: .failure(error))
            }
            openConnectionForWaiterIfPossible()
        }
    }
}

/// A Bool readable from any thread without awaiting the actor.
final class HealthFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var storage = true

    var value: Bool { lock.withLock { storage } }

    func set(_ newValue: Bool) { lock.withLock { storage = newValue } }
}
