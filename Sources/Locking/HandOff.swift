import Synchronization

/// Orders a hand-off between two threads that passes through the kernel:
/// an object armed with `epoll_ctl` on one thread and received from
/// `epoll_wait` on another (`OneShotWaiter`, `PostgresSocketWaiter`). The
/// kernel already orders the two; a releasing store before the arming and
/// an acquiring load after the receipt state that order where
/// ThreadSanitizer can see it (`scripts/thread-check.sh`). On x86 both are
/// plain moves.
public struct HandOff: ~Copyable, Sendable {
    private let given = Atomic<Bool>(false)

    public init() {}

    /// On the giving thread, after its last write, before the kernel call.
    public func give() { given.store(true, ordering: .releasing) }

    /// On the receiving thread, before its first read.
    public func take() { _ = given.load(ordering: .acquiring) }
}
