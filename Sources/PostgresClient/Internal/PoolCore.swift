import Foundation

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
    /// Times the acquire timeout: the continuous clock in production, a
    /// manual one in tests (so the timeout logic is tested without sleeping).
    private let clock: any Clock<Duration>

    init(configuration: PostgresPool.Configuration, clock: any Clock<Duration>) {
        self.configuration = configuration
        self.clock = clock
        self.state = PoolStateMachine(
            connectionsMax: configuration.connectionsMax, waitersMax: configuration.waitersMax)
    }

    var statistics: PostgresPool.Statistics {
        PostgresPool.Statistics(
            openConnections: state.openCount, idleConnections: state.idle.count,
            waiters: state.waiterCount, peakOpenConnections: state.peakOpenCount)
    }

    func close() {
        let (_, failing) = state.close()  // idle connections close as they are dropped here
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
        let timeout = configuration.acquireTimeout
        let clock = self.clock
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<PostgresConnection, PostgresError>, Never>) in
                // Runs on the actor: a cancellation before this point is seen here,
                // one after it finds the registered waiter.
                if Task.isCancelled {
                    _ = state.waiterLeft(id)
                    continuation.resume(returning: .failure(Self.cancelledError))
                    return
                }
                let timeoutTask = Task { [weak self] in
                    try? await clock.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    await self?.waiterLeft(
                        id,
                        failingWith: PostgresError(
                            code: .timeout, message: "no connection within \(timeout)"))
                }
                waiters[id] = Waiter(continuation: continuation, timeoutTask: timeoutTask)
            }
        } onCancel: {
            Task { await self.waiterLeft(id, failingWith: Self.cancelledError) }
        }
        return try result.get()
    }

    private static let cancelledError = PostgresError(
        code: .cancelled, message: "the task waiting for a connection was cancelled")

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
