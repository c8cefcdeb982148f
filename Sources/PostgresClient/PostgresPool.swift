import Foundation
import Locking

/// A bounded pool of PostgreSQL connections: at most `connectionsMax` open,
/// at most `waitersMax` callers queued (FIFO), each waiting at most
/// `acquireTimeout`. Lost connections are dropped and replaced on
/// demand, so the service recovers by itself after a database restart.
public final class PostgresPool: Sendable {
    public let configuration: Configuration
    private let core: PoolCore
    /// Told about every acquisition (see `observeAcquisitions`). Held in a
    /// struct, not as a bare closure: a closure stored as the Mutex's generic
    /// value is re-wrapped in a reabstraction thunk on every `withLock`
    /// access and written back, so each read made every later call one
    /// thunk deeper (found by perf: spends slowed down as the run went on).
    let acquisitionObserver = Mutex<AcquisitionObserver?>(nil)
    private var health: HealthFlag { core.health }

    /// Counters for tests, health pages and benchmarks.
    public struct Statistics: Sendable {
        public let openConnections: Int
        public let idleConnections: Int
        public let waiters: Int
        public let peakOpenConnections: Int
    }

    public convenience init(configuration: Configuration) {
        self.init(configuration: configuration, clock: ContinuousClock())
    }

    /// A pool whose acquire timeout runs on `clock` (tests pass a manual one).
    init(configuration: Configuration, clock: any Clock<Duration>) {
        self.configuration = configuration
        self.core = PoolCore(configuration: configuration, clock: clock)
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
        let connection = try await acquireObserved()
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
            let connection = try await acquireObserved()
            do {
                try await connection.execute("BEGIN ISOLATION LEVEL \(level.rawValue)")
            } catch {
                await core.release(connection)
                beginAttempts += 1
                if error.isConnectionLoss && beginAttempts <= configuration.connectionsMax { continue }
                throw error
            }
            let outcome: Result<Value, any Error>
            do {
                let value = try await body(connection)
                let tag: String
                do {
                    tag = try await connection.execute("COMMIT").commandTag
                } catch {
                    // The COMMIT may have been applied before the connection
                    // went: never "not committed", so nobody retries blindly.
                    guard error.isConnectionLoss else { throw error }
                    throw PostgresError(
                        code: .commitOutcomeUnknown, sqlState: error.sqlState,
                        message: "the connection was lost during COMMIT: \(error.message)", isConnectionLoss: true)
                }
                outcome =
                    tag == "COMMIT"
                    ? .success(value)
                    : .failure(
                        PostgresError(code: .transactionAborted, message: "transaction was aborted and rolled back"))
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

    /// `core.acquire()`, timed for the observer.
    private func acquireObserved() async throws(PostgresError) -> PostgresConnection {
        guard let observer = acquisitionObserver.withLock({ $0 })?.observe else { return try await core.acquire() }
        let startedAt = ContinuousClock.now
        do {
            let connection = try await core.acquire()
            observer(Acquisition(waited: ContinuousClock.now - startedAt, gaveUp: false))
            return connection
        } catch {
            let gaveUp = error.code == .timeout || error.code == .poolExhausted
            observer(Acquisition(waited: ContinuousClock.now - startedAt, gaveUp: gaveUp))
            throw error
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
