import RPCRuntime

/// The TLS handshake of one accepted connection on the loop, before any
/// HTTP: steps OpenSSL on each readiness event, bounded by a deadline so a
/// stalled or plaintext client cannot hold a connection slot. On success
/// the socket (now speaking TLS, its ALPN choice known) goes to
/// `onFinish`; on failure the socket is closed first. Loop-confined.
final class TLSHandshake {
    let socket: ConnectedSocket
    private let loop: EventLoop
    private var interest: EventLoop.IOEvents?
    private var timer: EventLoop.TimerID?
    private var finished = false

    /// Called once: whether the handshake completed (false: socket closed).
    /// Not called after `cancel()`.
    var onFinish: ((Bool) -> Void)?

    init(socket: ConnectedSocket, loop: EventLoop) {
        loop.assertInEventLoop()
        self.socket = socket
        self.loop = loop
    }

    /// Starts stepping; fails the handshake after `timeoutMilliseconds`.
    func start(timeoutMilliseconds: Int64) {
        timer = loop.schedule(after: .milliseconds(timeoutMilliseconds)) { [weak self] in
            self?.timer = nil
            self?.finish(success: false)
        }
        step()
    }

    /// Closes the socket without reporting (server shutdown).
    func cancel() {
        onFinish = nil
        finish(success: false)
    }

    private func step() {
        guard !finished else { return }
        switch socket.continueTLSHandshake() {
        case .complete: finish(success: true)
        case .wantsReadable: watch(.readable)
        case .wantsWritable: watch(.writable)
        case .failed: finish(success: false)
        }
    }

    private func watch(_ events: EventLoop.IOEvents) {
        guard interest != events else { return }
        do {
            if interest == nil {
                try loop.register(fd: socket.descriptor, events: events) { [weak self] _ in self?.step() }
            } else {
                try loop.modify(fd: socket.descriptor, events: events)
            }
            interest = events
        } catch {
            finish(success: false)
        }
    }

    private func finish(success: Bool) {
        guard !finished else { return }
        finished = true
        if interest != nil { loop.unregister(fd: socket.descriptor) }
        interest = nil
        if let timer { loop.cancel(timer) }
        timer = nil
        if !success { socket.close() }
        let onFinish = self.onFinish
        self.onFinish = nil
        onFinish?(success)
    }
}
