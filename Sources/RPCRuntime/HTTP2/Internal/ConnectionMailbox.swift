import Locking

/// Hands work from any thread to one connection's event loop in batches.
/// Calls finishing on the cooperative pool post here; the first post of a
/// batch wakes the loop once, and the loop runs everything posted meanwhile
/// with the connection's writes coalesced: one eventfd wake-up and one socket
/// write for many responses instead of several of each per call.
final class ConnectionMailbox: Sendable {
    /// Loop-confined and weak: the connection owns the mailbox, not the reverse.
    private final class ConnectionReference {
        weak var connection: HTTP2Connection?
        init(_ connection: HTTP2Connection) { self.connection = connection }
    }

    let loop: EventLoop
    private let pending = Mutex<[@Sendable () -> Void]>([])
    private let target: LoopBound<ConnectionReference>

    /// Created on the loop by the connection it serves.
    init(connection: HTTP2Connection, loop: EventLoop) {
        self.loop = loop
        self.target = LoopBound(ConnectionReference(connection), loop: loop)
    }

    /// Runs `work` on the loop soon, from any thread. Returns false when the
    /// loop has exited (the work is then dropped, as with `EventLoop.execute`).
    @discardableResult
    func post(_ work: @escaping @Sendable () -> Void) -> Bool {
        let first = pending.withLock { queue in
            queue.append(work)
            return queue.count == 1
        }
        guard first else { return true }
        return loop.execute { [self] in drain() }
    }

    private func drain() {
        let batch = pending.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        guard let connection = target.value.connection else {
            for work in batch { work() }
            return
        }
        connection.batchingWrites {
            for work in batch { work() }
        }
    }
}
