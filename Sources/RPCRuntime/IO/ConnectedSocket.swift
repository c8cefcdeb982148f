import CEventIO
import Glibc

/// A connected non-blocking TCP socket with the read/write outcomes an
/// event-driven protocol needs. It owns its descriptor: `close()` or
/// `deinit` closes it, unless `releaseDescriptor()` handed it to a new owner
/// (e.g. `HTTP2Server.adopt`). Loop-confined by convention: use it on the
/// event loop it is registered with.
public final class ConnectedSocket {
    /// Outcome of one non-blocking read.
    public enum ReadOutcome: Sendable, Equatable {
        case bytes(Int)
        case wouldBlock
        case endOfStream
        case failed(errorNumber: Int32)
    }

    /// Outcome of one non-blocking write.
    public enum WriteOutcome: Sendable, Equatable {
        case wrote(Int)
        case wouldBlock
        case failed(errorNumber: Int32)
    }

    /// The descriptor, or -1 once closed or released.
    public private(set) var descriptor: Int32
    /// The peer as "ip:port" (for logs).
    public let remotePeer: String
    /// Set by `startServerTLS`: reads and writes then go through TLS
    /// (see ConnectedSocket+TLS.swift). Freed on close.
    var tls: TLSTransport?

    init(adopting fd: Int32, remotePeer: String) {
        descriptor = fd
        self.remotePeer = remotePeer
    }

    deinit { close() }

    /// True when the last `read` took fewer bytes than asked for from a
    /// plain socket: its receive queue was empty afterwards, so with a
    /// level-triggered `EventLoop` the next bytes (or the peer's end of
    /// stream) raise a new event and reading again now would only return
    /// EAGAIN. False after a TLS read (its records are buffered apart).
    public private(set) var lastReadDrainedSocket = false

    /// Reads at most `buffer.count` bytes; retries EINTR.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadOutcome {
        guard descriptor >= 0 else { return .failed(errorNumber: EBADF) }
        lastReadDrainedSocket = false
        if let tls { return Self.outcome(of: tls.read(into: buffer)) }
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count > 0 {
                lastReadDrainedSocket = count < buffer.count
                return .bytes(count)
            }
            if count == 0 { return .endOfStream }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(errorNumber: code)
        }
    }

    /// Writes as much of `bytes` as the socket takes now; never raises SIGPIPE.
    public func write(_ bytes: UnsafeRawBufferPointer) -> WriteOutcome {
        guard descriptor >= 0 else { return .failed(errorNumber: EBADF) }
        if let tls { return Self.outcome(of: tls.write(bytes)) }
        while true {
            let count = send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .wrote(count) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(errorNumber: code)
        }
    }

    /// Half-closes our sending side (the peer reads end-of-stream after
    /// what was already written).
    public func shutdownWrite() {
        guard descriptor >= 0 else { return }
        tls?.sendCloseNotify()
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Gives up ownership: the caller now owns (and must close) the
    /// returned descriptor; this object no longer touches it.
    public func releaseDescriptor() -> Int32 {
        let fd = descriptor
        descriptor = -1
        return fd
    }

    /// Closes the descriptor (unregister it from its loop first). Idempotent.
    public func close() {
        tls = nil
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }
}
