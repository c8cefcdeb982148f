import Dispatch
import Glibc
import Synchronization

/// SIGTERM/SIGINT as an awaitable event, so a service shuts down gracefully
/// (stop accepting, let in-flight calls finish, close pools). Install it
/// first thing in `main`, before announcing readiness: a signal that arrives
/// any time after `install()` is remembered, never lost.
public final class ShutdownSignal: Sendable {
    private let state = Mutex<(fired: String?, waiters: [CheckedContinuation<String, Never>])>((nil, []))
    // Kept only to keep the sources alive; never touched after set-up.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]

    private init(sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    /// Takes over SIGTERM and SIGINT for the rest of the process. Every call
    /// returns the same instance: installing twice would reset the signal
    /// disposition under libdispatch's handler and lose signals.
    public static func install() -> ShutdownSignal { installed }

    /// An instance fired only by `trigger` (tests, embedded servers).
    public static func manual() -> ShutdownSignal { ShutdownSignal(sources: []) }

    private static let installed: ShutdownSignal = {
        let queue = DispatchQueue(label: "shutdown-signal")
        // Ignore the default action first so the signal cannot kill the
        // process; the dispatch sources still observe it.
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: queue))
        }
        let shutdown = ShutdownSignal(sources: sources)
        for (source, name) in zip(sources, ["SIGTERM", "SIGINT"]) {
            source.setEventHandler { [weak shutdown] in shutdown?.fire(name) }
            source.resume()
        }
        return shutdown
    }()

    private func fire(_ name: String) {
        let waiters = state.withLock { state -> [CheckedContinuation<String, Never>] in
            if state.fired == nil { state.fired = name }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: name) }
    }

    /// The name of the first signal received; suspends until there is one.
    public func wait() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let fired = state.withLock { state -> String? in
                if let fired = state.fired { return fired }
                state.waiters.append(continuation)
                return nil
            }
            if let fired { continuation.resume(returning: fired) }
        }
    }

    /// Fires as if a signal arrived (tests, and fatal start-up paths).
    public func trigger(_ name: String = "manual") { fire(name) }
}
