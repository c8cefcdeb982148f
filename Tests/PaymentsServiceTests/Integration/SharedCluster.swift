import Foundation
import Synchronization

/// One `PaymentsCluster` shared by the tests of a class (started on first
/// use, shut down from the class's `tearDown`), so a class pays for the
/// process start-ups once.
final class SharedCluster: Sendable {
    private let starting = Mutex<Task<PaymentsCluster, any Error>?>(nil)
    private let start: @Sendable () async throws -> PaymentsCluster

    init(start: @escaping @Sendable () async throws -> PaymentsCluster = { try await PaymentsCluster.start() }) {
        self.start = start
    }

    func cluster() async throws -> PaymentsCluster {
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
    /// waits, bounded, for the services to stop and the database to go.
    func shutdownBlocking() {
        guard let task = starting.withLock({ current in defer { current = nil }; return current }) else { return }
        let done = DispatchSemaphore(value: 0)
        Task {
            if let cluster = try? await task.value { await cluster.shutdown() }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 60)
    }
}
