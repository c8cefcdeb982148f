import Locking

/// The Task running one call's handler. It is created off the loop (see
/// `HTTP2Connection.startOffLoop`), so the loop may ask to cancel it before
/// it exists; it is then cancelled as soon as it is created, exactly as if
/// it had been created first.
final class HandlerTask: Sendable {
    private enum State: Sendable {
        case notCreated
        case cancelledBeforeCreation
        case created(Task<Void, Never>)
    }

    private let state = Mutex(State.notCreated)

    /// Creates the Task running `operation` (preferring `executor`, if
    /// given). Call once, from any thread.
    func start(_ operation: @escaping @Sendable () async -> Void, executor: (any TaskExecutor)? = nil) {
        let task = Task(executorPreference: executor, operation: operation)
        let cancelled = state.withLock { state in
            if case .cancelledBeforeCreation = state { return true }
            state = .created(task)
            return false
        }
        if cancelled { task.cancel() }
    }

    /// Cancels the Task, now or when it is created. From any thread.
    func cancel() {
        let task: Task<Void, Never>? = state.withLock { state in
            switch state {
            case .notCreated:
                state = .cancelledBeforeCreation
                return nil
            case .cancelledBeforeCreation:
                return nil
            case .created(let task):
                return task
            }
        }
        task?.cancel()
    }
}
