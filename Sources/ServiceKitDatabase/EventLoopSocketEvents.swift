import PostgresClient
import RPCRuntime

/// PostgresClient's socket waits on an RPCRuntime `EventLoop` instead of the
/// process's reactor thread: a service whose handlers run on its server's
/// loop (`RPCServer.Configuration.handlersOnLoop`) sends a statement there,
/// and with this the loop also reads the answer and continues the handler,
/// with no other thread woken in between (docs/ARCHITECTURE.md, "Tasks on a
/// loop"). The loop must outlive the pool: close the pool, then stop the loop.
public struct EventLoopSocketEvents: PostgresSocketEvents {
    public let loop: EventLoop

    public init(loop: EventLoop) { self.loop = loop }

    public func arm(fd: Int32, writable: Bool, alreadyRegistered: Bool, waiter: PostgresSocketWaiter)
        throws(PostgresError)
    {
        do {
            try loop.armOnce(
                fd: fd, writable: writable, alreadyRegistered: alreadyRegistered, waiter: Forwarder(waiter))
        } catch {
            throw PostgresError(
                code: .queryFailed, message: "epoll_ctl failed for a database socket: errno \(error.errorNumber)",
                isConnectionLoss: true)
        }
    }

    public func forget(fd: Int32) { loop.disarm(fd: fd) }

    /// Hands the loop's event to the statement waiting for it.
    private final class Forwarder: OneShotWaiter {
        private let waiter: PostgresSocketWaiter

        init(_ waiter: PostgresSocketWaiter) { self.waiter = waiter }

        override func descriptorBecameReady(_ events: UInt32) { waiter.socketBecameReady(events) }
    }
}
