import Dispatch
import Glibc

/// Waits for SIGTERM or SIGINT so a service can shut down gracefully
/// (stop accepting, let in-flight calls finish, close pools).
public enum ShutdownSignal {
    /// Suspends until the process receives SIGTERM or SIGINT; returns its name.
    /// The default actions are disabled so the signal cannot kill the process
    /// before the graceful path runs.
    public static func wait() async -> String {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let queue = DispatchQueue(label: "shutdown-signal")
        return await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let state = SignalState(continuation: continuation)
            for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { state.fire(name) }
                source.resume()
                state.retain(source)
            }
        }
    }
}

/// Resumes the waiting continuation once, from the signal queue only.
private final class SignalState: @unchecked Sendable {
    private var continuation: CheckedContinuation<String, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init(continuation: CheckedContinuation<String, Never>) { self.continuation = continuation }

    // Called on the serial signal queue (and once during set-up before any
    // signal can be delivered to it).
    func retain(_ source: any DispatchSourceSignal) { sources.append(source) }

    func fire(_ name: String) {
        continuation?.resume(returning: name)
        continuation = nil
    }
}
