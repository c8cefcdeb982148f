import CSignalPipe
import Foundation
import Glibc
import Locking

/// SIGTERM/SIGINT as an awaitable event, so a service shuts down gracefully
/// (stop accepting, let in-flight calls finish, close pools). Install it
/// first thing in `main`: a signal that arrives any time after `install()`
/// is remembered, never lost, whichever thread the kernel delivers it to
/// (a C handler writes it to a pipe that a dedicated thread reads).
public final class ShutdownSignal: Sendable {
    private let state = Mutex<(fired: String?, waiters: [CheckedContinuation<String, Never>])>((nil, []))

    private init() {}

    /// Takes over SIGTERM and SIGINT for the rest of the process. Every call
    /// returns the same instance.
    public static func install() -> ShutdownSignal { installed }

    /// An instance fired only by `trigger` (tests, embedded servers).
    public static func manual() -> ShutdownSignal { ShutdownSignal() }

    private static let installed: ShutdownSignal = {
        let shutdown = ShutdownSignal()
        var readEnd: Int32 = -1
        for number in [SIGTERM, SIGINT] {
            readEnd = csignalpipe_install(number)
            precondition(readEnd >= 0, "cannot install the \(number) handler: errno \(errno)")
        }
        let fd = readEnd
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(fd, &byte, 1)
                if count == 1 {
                    shutdown.fire(Int32(byte) == SIGINT ? "SIGINT" : "SIGTERM")
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        thread.name = "shutdown-signal"
        thread.start()
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
