import Foundation
import Synchronization

/// One fixture (a `PaymentsCluster`, an `AppStoreSyncFixture`) shared by the
/// tests of a class: started on first use, shut down from the class's
/// `tearDown`, so a class pays for the process start-ups once.
final class SharedFixture<Value: Sendable>: Sendable {
    private let starting = Mutex<Task<Value, any Error>?>(nil)
    private let start: @Sendable () async throws -> Value
    private let shutdown: @Sendable (Value) async -> Void

    init(start: @escaping @Sendable () async throws -> Value, shutdown: @escaping @Sendable (Value) async -> Void) {
        self.start = start
        self.shutdown = shutdown
    }

    func value() async throws -> Value {
        let start = self.start
        let task = starting.withLock { current in
            if let current { return current }
            let created = Task { try await start() }
            current = created
            return created
        }
        return try await task.value
    }

    /// From a synchronous class `tearDown` (the main thread, not the pool):
    /// waits, bounded, for the fixture to stop.
    func shutdownBlocking() {
        guard
            let task = starting.withLock({ current in
                defer { current = nil }; return current
            })
        else { return }
        let shutdown = self.shutdown
        let done = DispatchSemaphore(value: 0)
        Task {
            if let value = try? await task.value { await shutdown(value) }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 60)
    }
}

/// The common case: one `PaymentsCluster` for a class.
final class SharedCluster: Sendable {
    private let fixture: SharedFixture<PaymentsCluster>

    init(start: @escaping @Sendable () async throws -> PaymentsCluster = { try await PaymentsCluster.start() }) {
        fixture = SharedFixture(start: start, shutdown: { await $0.shutdown() })
    }

    func cluster() async throws -> PaymentsCluster { try await fixture.value() }
    func shutdownBlocking() { fixture.shutdownBlocking() }
}
