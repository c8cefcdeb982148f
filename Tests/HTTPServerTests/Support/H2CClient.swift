import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// A blocking h2c client on a raw loopback socket that writes frames by
/// hand (HPACK literals, no Huffman coding) and reads frames without
/// decoding their header blocks. Every read waits at most 5 s. For tests
/// that need input curl would never send; use off the cooperative pool.
final class H2CClient: @unchecked Sendable {
    /// One received frame.
    struct Frame {
        let type: UInt8
        let flags: UInt8
        let streamID: UInt32
        let payload: [UInt8]

        var endsStream: Bool { (type == FrameType.headers || type == FrameType.data) && flags & 0x1 != 0 }
        /// The error code of a RST_STREAM or GOAWAY frame.
        var errorCode: UInt32? {
            let offset: Int
            switch type {
            case FrameType.resetStream: offset = 0
            case FrameType.goAway: offset = 4
            default: return nil
            }
            guard payload.count >= offset + 4 else { return nil }
            return payload[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }
    }

    enum FrameType {
        static let data: UInt8 = 0x0
        static let headers: UInt8 = 0x1
        static let resetStream: UInt8 = 0x3
        static let settings: UInt8 = 0x4
        static let goAway: UInt8 = 0x7
        static let windowUpdate: UInt8 = 0x8
    }

    static let preface = HTTP2FrameBytes.preface

    let fd: Int32
    private var pending: [UInt8] = []

    init(port: Int) throws {
        fd = try connectLoopbackSocket(port: port)
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw POSIXError(.EPIPE) }
            offset += count
        }
    }

    static func frame(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8]) -> [UInt8] {
        HTTP2FrameBytes.frame(type: type, flags: flags, streamID: streamID, payload: payload)
    }

    /// The preface and an empty SETTINGS frame.
    func sendPreface() throws {
        try send(Self.preface + Self.frame(type: FrameType.settings, flags: 0, streamID: 0, payload: []))
    }

    /// A header block of literal fields without indexing, new names (RFC 7541 6.2.2).
    static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
        fields.flatMap { HTTP2FrameBytes.literalField(name: $0.0, value: $0.1) }
    }

    static func request(method: String, path: String, extra: [(String, String)] = []) -> [(String, String)] {
        [(":method", method), (":scheme", "http"), (":path", path), (":authority", "test")] + extra
    }

    /// HEADERS with END_HEADERS, and END_STREAM when `endStream`.
    func sendHeaders(streamID: UInt32, fields: [(String, String)], endStream: Bool) throws {
        try send(
            Self.frame(
                type: FrameType.headers, flags: 0x4 | (endStream ? 0x1 : 0), streamID: streamID,
                payload: Self.headerBlock(fields)))
    }

    func sendData(streamID: UInt32, bytes: [UInt8], endStream: Bool) throws {
        try send(Self.frame(type: FrameType.data, flags: endStream ? 0x1 : 0, streamID: streamID, payload: bytes))
    }

    /// The next frame; nil when the server closed the connection or 5 s passed.
    func readFrame() -> Frame? {
        while true {
            if pending.count >= 9 {
                let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
                if pending.count >= 9 + length {
                    let streamID =
                        UInt32(pending[5] & 0x7F) << 24 | UInt32(pending[6]) << 16 | UInt32(pending[7]) << 8
                        | UInt32(pending[8])
                    let frame = Frame(
                        type: pending[3], flags: pending[4], streamID: streamID,
                        payload: Array(pending[9..<(9 + length)]))
                    pending.removeFirst(9 + length)
                    return frame
                }
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            pending += buffer[0..<count]
        }
    }

    /// The frames of `streamID` until one ends it, or until the stream's
    /// RST_STREAM (included); nil when the connection ended first. Bounded.
    func readStream(_ streamID: UInt32) -> [Frame]? {
        var frames: [Frame] = []
        for _ in 0..<10_000 {
            guard let frame = readFrame() else { return nil }
            guard frame.streamID == streamID else { continue }
            frames.append(frame)
            if frame.endsStream || frame.type == FrameType.resetStream { return frames }
        }
        return nil
    }
}
