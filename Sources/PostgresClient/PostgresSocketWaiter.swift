import Locking

/// A statement waiting for its connection's socket (see `PostgresSocketEvents`).
/// A class, not a protocol, so a reactor calls it without a dynamic cast per
/// event; only PostgresClient subclasses it.
public class PostgresSocketWaiter {
    /// From the thread that arms the socket (`give()` before `epoll_ctl`) to
    /// the one that receives its event (`take()` before `socketBecameReady`).
    let handOff = HandOff()

    init() {}

    /// The epoll readiness bits; called once per arming, on the reactor's thread.
    public func socketBecameReady(_ events: UInt32) {
        preconditionFailure("subclasses override socketBecameReady")
    }
}
