// CEventIO pulls in <sys/socket.h> as part of its Clang module; in whole-module (release)
// builds MSG_NOSIGNAL is only visible through it, so Glibc alone does not suffice here.
import CEventIO
#if canImport(Glibc)
import Glibc
#endif
import RPCCore

/// Outcome of a non-blocking read.
enum TransportRead {
    case bytes(Int)
    case wouldBlock
    case endOfStream
    case failed(Error)
}

/// Outcome of a non-blocking write.
enum TransportWrite {
    case wrote(Int)
    case wouldBlock
    case failed(Error)
}

/// A non-blocking byte stream over a socket: plain TCP or TLS. Loop-confined.
protocol ByteTransport: AnyObject {
    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportRead
    func write(_ bytes: UnsafeRawBufferPointer) -> TransportWrite
    /// True when the last call stopped because the socket must become writable.
    var needsWritable: Bool { get }
    /// The ALPN protocol the peer agreed on, if any.
    var negotiatedProtocol: String? { get }
    /// The peer's verified certificate names (TLS with client certificates).
    var peerIdentity: PeerIdentity? { get }
    /// True when the last read took fewer bytes than asked for straight
    /// from the socket: its receive queue was empty afterwards, and as the
    /// loop's epoll is level-triggered, more bytes (or the peer's end of
    /// stream) raise a new event, so another read now would only return
    /// EAGAIN. False when unsure (TLS keeps records of its own).
    var lastReadDrainedSocket: Bool { get }
}

extension ByteTransport {
    /// Without TLS nobody proved anything.
    var peerIdentity: PeerIdentity? { nil }
    var lastReadDrainedSocket: Bool { false }
}

/// Plain TCP: read(2)/write(2) on a non-blocking socket.
final class PlainTransport: ByteTransport {
    let fd: Int32

    init(fd: Int32) { self.fd = fd }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportRead {
        lastReadDrainedSocket = false
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count > 0 {
                lastReadDrainedSocket = count < buffer.count
                return .bytes(count)
            }
            if count == 0 { return .endOfStream }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(SystemError(call: "read", errorNumber: code))
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportWrite {
        while true {
            let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 {
                needsWritable = false
                return .wrote(count)
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                needsWritable = true
                return .wouldBlock
            }
            return .failed(SystemError(call: "send", errorNumber: code))
        }
    }

    private(set) var needsWritable = false
    private(set) var lastReadDrainedSocket = false
    var negotiatedProtocol: String? { nil }
}
