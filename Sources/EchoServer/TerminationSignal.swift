import Dispatch
import Glibc
import Synchronization

/// Catches SIGTERM/SIGINT from the moment it is created, so a signal sent
/// right after we announce readiness is never lost (ServiceKit's
/// ShutdownSignal.wait() installs its handlers only when called).
final class TerminationSignal: @unchecked Sendable {  // sources: set in init, never mutated
    private struct State {
        var received: String?
        var waiter: CheckedContinuation<String, Never>?
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "echo-termination-signal")
    private var sources: [any DispatchSourceSignal] = []

    init() {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in fire(name) }
            source.resume()
            sources.append(source)
        }
    }

    private func fire(_ name: String) {
        let waiter = state.withLock { state -> CheckedContinuation<String, Never>? in
            if state.received == nil { state.received = name }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: name)
    }

    /// Suspends until a signal arrived (returns at once if one already did).
    func wait() async -> String {
        await withCheckedContinuation { continuation in
            let received = state.withLock { state -> String? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let received { continuation.resume(returning: received) }
        }
    }
}
