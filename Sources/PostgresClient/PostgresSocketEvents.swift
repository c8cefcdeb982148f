/// Where a pool's connections wait for their sockets while a statement is
/// in flight: the process's own reactor thread by default
/// (`PostgresPool.Configuration.socketEvents` nil), or an event loop the
/// caller already runs, e.g. the one whose tasks send the statements, so
/// the answer is read on the thread that continues with it and no other
/// thread wakes (docs/ARCHITECTURE.md, "Tasks on a loop").
public protocol PostgresSocketEvents: Sendable {
    /// Arms `fd` for one readiness event (readable and hang-up, plus
    /// writable when `writable`); `waiter.socketBecameReady` runs once, on
    /// the implementation's thread. `alreadyRegistered` is the connection's
    /// memory of whether `fd` is already watched; the connection records that
    /// it is before it calls, since the event (and a re-arming from it) may run
    /// on the other thread before this returns. On failure nothing stays
    /// armed and the caller fails its statement.
    func arm(fd: Int32, writable: Bool, alreadyRegistered: Bool, waiter: PostgresSocketWaiter) throws(PostgresError)

    /// Stops watching `fd` before its connection closes it (never while armed).
    func forget(fd: Int32)
}
