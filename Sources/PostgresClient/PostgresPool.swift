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

    /// Probes every `intervalMilliseconds` until the calling task is cancelled,
    /// so `isHealthy` also notices an outage while the service is idle.
    public func runHealthProbes(intervalMilliseconds: Int) async {
        precondition(intervalMilliseconds > 0)
        while !Task.isCancelled {
            await probe()
            try? await Task.sleep(for: .milliseconds(intervalMilliseconds))
        }
    }

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

/// Runs the pool: owns the waiters' continuations and timeouts and does the
/// I/O (opening connections); every decision comes from `PoolStateMachine`.
actor PoolCore {
    nonisolated let configuration: PostgresPool.Configuration
    nonisolated let health = HealthFlag()

    private struct Waiter {
        let continuation: CheckedContinuation<Result<PostgresConnection, PostgresError>, Never>
        let timeoutTask: Task<Void, Never>
    }

    private var state: PoolStateMachine<PostgresConnection>
    private var waiters: [UInt64: Waiter] = [:]

    init(configuration: PostgresPool.Configuration) {
        self.configuration = configuration
        self.state = PoolStateMachine(maxConnections: configuration.maxConnections, maxWaiters: configuration.maxWaiters)
    }

    var statistics: PostgresPool.Statistics {
        PostgresPool.Statistics(openConnections: state.openCount, idleConnections: state.idle.count,
                                waiters: state.waiterCount, peakOpenConnections: state.peakOpenCount)
    }

    func close() {
        let (_, failing) = state.close()   // idle connections close as they are dropped here
        for id in failing { resume(id, with: .failure(PostgresError(code: .poolClosed, message: "pool closed"))) }
    }

    func acquire() async throws(PostgresError) -> PostgresConnection {
        switch state.acquire(isUsable: { !$0.isBroken }) {
        case .use(let connection):
            return connection
        case .open:
            return try await open(forWaiter: false)
        case .wait(let id):
            return try await wait(id)
        case .failClosed:
            throw PostgresError(code: .poolClosed, message: "pool closed")
        case .failExhausted(let waiting):
            throw PostgresError(code: .poolExhausted, message: "\(waiting) callers already wait for a connection")
        }
    }

    func release(_ connection: PostgresConnection) {
        let broken = connection.isBroken
        if broken { health.set(false) }
        run(state.release(connection, broken: broken))
    }

    // MARK: Actions

    private func run(_ action: PoolStateMachine<PostgresConnection>.ReleaseAction) {
        switch action {
        case .handOver(let connection, let id):
            guard waiters[id] != nil else {
                // Not registered (cannot happen: registration follows `.wait` without suspending);
                // keep the connection in the pool rather than leak its slot.
                return run(state.release(connection, broken: false))
            }
            resume(id, with: .success(connection))
        case .park:
            break
        case .discard(let openForWaiter):
            if openForWaiter { Task { await self.openForWaiter() } }
        }
    }

    /// Opens a connection in a reserved slot.
    private func open(forWaiter: Bool) async throws(PostgresError) -> PostgresConnection {
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration)
            health.set(true)
            return connection
        } catch {
            health.set(false)
            let failure = state.connectFailed(wasForWaiter: forWaiter)
            if let id = failure.failWaiter { resume(id, with: .failure(error)) }
            if failure.openForWaiter { Task { await self.openForWaiter() } }
            throw error
        }
    }

    /// After a slot freed up while callers wait: open a connection for the first of them.
    private func openForWaiter() async {
        guard let connection = try? await open(forWaiter: true) else { return }
        run(state.connectionOpenedForWaiter(connection))
    }

    private func wait(_ id: UInt64) async throws(PostgresError) -> PostgresConnection {
        let timeoutMilliseconds = configuration.acquireTimeoutMilliseconds
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<PostgresConnection, PostgresError>, Never>) in
                // Runs on the actor: a cancellation before this point is seen here,
                // one after it finds the registered waiter.
                if Task.isCancelled {
                    _ = state.waiterLeft(id)
                    continuation.resume(returning: .failure(Self.cancelledError))
                    return
                }
                let timeoutTask = Task { [weak self] in
                    try? await Task.sleep(for: .milliseconds(timeoutMilliseconds))
                    guard !Task.isCancelled else { return }
                    await self?.waiterLeft(id, failingWith: PostgresError(
                        code: .timeout, message: "no connection within \(timeoutMilliseconds) ms"))
                }
                waiters[id] = Waiter(continuation: continuation, timeoutTask: timeoutTask)
            }
        } onCancel: {
            Task { await self.waiterLeft(id, failingWith: Self.cancelledError) }
        }
        return try result.get()
    }

    private static let cancelledError = PostgresError(code: .cancelled, message: "the task waiting for a connection was cancelled")

    private func waiterLeft(_ id: UInt64, failingWith error: PostgresError) {
        guard state.waiterLeft(id) else { return }
        resume(id, with: .failure(error))
    }

    private func resume(_ id: UInt64, with result: Result<PostgresConnection, PostgresError>) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.timeoutTask.cancel()
        waiter.continuation.resume(returning: result)
    }
}

/// A Bool readable from any thread without awaiting the actor.
final class HealthFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var storage = true

    var value: Bool { lock.withLock { storage } }

    func set(_ newValue: Bool) { lock.withLock { storage = newValue } }
}
