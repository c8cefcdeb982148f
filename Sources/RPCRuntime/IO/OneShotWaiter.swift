import Synchronization

/// Something waiting for one readiness event of a descriptor armed with
/// `EventLoop.armOnce`. A class, not a protocol, so the loop calls it without
/// a dynamic cast per event; subclasses override `descriptorBecameReady`.
open class OneShotWaiter {
    /// Set (releasing) by the thread that arms the descriptor, just before
    /// `epoll_ctl`, and read (acquiring) by the thread that receives the
    /// event, before it runs the waiter. The kernel's epoll already orders
    /// the two; this states that order where ThreadSanitizer can see it
    /// (scripts/thread-check.sh). On x86 both are plain moves.
    private let handoff = Atomic<Bool>(false)

    public init() {}

    /// Publishes what the arming thread wrote, before the descriptor is armed.
    final func handOver() { handoff.store(true, ordering: .releasing) }

    /// Takes in what the arming thread wrote, before `descriptorBecameReady`.
    final func takeOver() { _ = handoff.load(ordering: .acquiring) }

    /// The epoll readiness bits; runs on the loop thread, once per arming.
    open func descriptorBecameReady(_ events: UInt32) {
        preconditionFailure("subclasses override descriptorBecameReady")
    }
}
