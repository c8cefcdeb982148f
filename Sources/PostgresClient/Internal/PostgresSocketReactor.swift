import CEventIO
import Foundation

/// The default `PostgresSocketEvents`: one epoll thread per process that waits for libpq sockets on behalf of
/// suspended queries, so no thread blocks per connection and a statement costs
/// no hand-off to a connection thread: the caller sends on its own thread,
/// arms the socket here, and this thread reads the answer and resumes it.
///
/// Each arming is one-shot (`EPOLLONESHOT`) and carries a retained reference
/// to its waiter as the event's token, so one arming is delivered exactly
/// once and the waiter lives until then; there is no table to lock.
final class PostgresSocketReactor: PostgresSocketEvents, @unchecked Sendable {
    /// The process-wide reactor; its thread starts on first use and lives as long as the process.
    static let shared = PostgresSocketReactor()

    /// Events handled per `epoll_wait` call at most.
    static let eventsPerWaitMax = 64

    private let epollFD: Int32

    private init() {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "epoll_create1 failed: errno \(errno)")
        let thread = Thread { [self] in self.run() }
        thread.name = "postgres-reactor"
        thread.stackSize = 512 * 1024
        thread.start()
    }

    /// Arms `fd` for one readiness event (readable, plus writable when
    /// `writable`); `waiter` is retained until that event is delivered. On
    /// failure nothing stays retained and the caller must fail its query.
    func arm(fd: Int32, writable: Bool, alreadyRegistered: Bool, waiter: PostgresSocketWaiter) throws(PostgresError) {
        let token = UInt64(UInt(bitPattern: Unmanaged.passRetained(waiter).toOpaque()))
        let interest =
            EPOLLIN.rawValue | EPOLLONESHOT.rawValue | EPOLLRDHUP.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        var event = CEventIO_epoll_event_make_token(interest, token)
        waiter.handOff.give()
        // A descriptor is added once and modified afterwards; libpq may have
        // closed and reopened it in between (the kernel drops a closed one).
        guard CEventIO_epoll_arm(epollFD, fd, &event, alreadyRegistered ? 1 : 0) == 0 else {
            let code = errno
            Unmanaged<PostgresSocketWaiter>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(token))!).release()
            throw PostgresError(
                code: .queryFailed, message: "epoll_ctl failed for a database socket: errno \(code)",
                isConnectionLoss: true)
        }
    }

    /// Removes `fd` before its owner closes it (an armed descriptor is never removed: its query holds the connection).
    func forget(fd: Int32) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: Self.eventsPerWaitMax)
        while true {
            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), -1)
            }
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait failed: errno \(errno)")
            }
            for index in 0..<Int(count) {
                let token = CEventIO_epoll_event_token(&events[index])
                let ready = CEventIO_epoll_event_events(&events[index])
                let waiter = Unmanaged<PostgresSocketWaiter>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(token))!)
                    .takeRetainedValue()
                waiter.handOff.take()
                waiter.socketBecameReady(ready)
            }
        }
    }
}
