import Synchronization

/// A statement waiting for its connection's socket (see `PostgresSocketEvents`).
/// A class, not a protocol, so a reactor calls it without a dynamic cast per
/// event; only PostgresClient subclasses it.
public class PostgresSocketWaiter {
    /// Set (releasing) by the thread that arms the descriptor, just before
    /// `epoll_ctl`, and read (acquiring) by the thread that receives the
    /// event, before it runs the waiter. The kernel's epoll already orders
    /// the two; this states that order where ThreadSanitizer can see it
    /// (scripts/thread-check.sh). On x86 both are plain moves.
    private let handoff = Atomic<Bool>(false)

    init() {}

    /// Publishes what the arming thread wrote, before the socket is armed.
    final func handOver() { handoff.store(true, ordering: .releasing) }

    /// Takes in what the arming thread wrote, before `socketBecameReady`.
    final func takeOver() { _ = handoff.load(ordering: .acquiring) }

    /// The epoll readiness bits; called once per arming, on the reactor's thread.
    public func socketBecameReady(_ events: UInt32) {
        preconditionFailure("subclasses override socketBecameReady")
    }
}
