import CNGHTTP2
import Foundation
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// A deliberately dumb HTTP/2 client on a blocking socket, for feeding the
/// server malformed or abusive input. Requests use HPACK literals (no
/// indexing, no Huffman); responses are decoded with nghttp2's inflater.
/// Use only from `onDedicatedThread`, never on the cooperative pool.
final class RawHTTP2Client: @unchecked Sendable {
    struct Frame {
        var type: UInt8
        var flags: UInt8
        var streamID: UInt32
        var payload: [UInt8]
        var endStream: Bool { flags & 0x1 != 0 }
    }

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    private(set) var fd: Int32
    private var inflater: OpaquePointer?
    private var pending: [UInt8] = []

    init(port: Int) throws {
        // Bounded waits: a read never hangs a test for more than 5 s.
        fd = try connectLoopbackSocket(port: port)
        nghttp2_hd_inflate_new(&inflater)
    }

    deinit {
        if let inflater { nghttp2_hd_inflate_del(inflater) }
        close()
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

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

    /// Preface plus an empty SETTINGS frame.
    func sendPreface() throws {
        try send(Self.preface + Self.frame(type: 0x4, flags: 0, streamID: 0, payload: []))
    }

    static func frame(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8]) -> [UInt8] {
        HTTP2FrameBytes.frame(type: type, flags: flags, streamID: streamID, payload: payload)
    }

    /// HPACK "literal header field without indexing, new name" for each field.
    static func headerBlock(_ fields: [(String, String)]) -> [UInt8] {
        fields.flatMap { HTTP2FrameBytes.literalField(name: $0.0, value: $0.1) }
    }

    static func grpcRequest(path: String, contentType: String = "application/grpc", extra: [(String, String)] = [])
        -> [(String, String)]
    {
        [
            (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1"),
            ("content-type", contentType), ("te", "trailers"),
        ] + extra
    }

    func sendHeaders(streamID: UInt32, fields: [(String, String)], endStream: Bool = false) throws {
        try send(
            Self.frame(
                type: 0x1, flags: 0x4 | (endStream ? 0x1 : 0), streamID: streamID, payload: Self.headerBlock(fields)))
    }

    func sendData(streamID: UInt32, bytes: [UInt8], endStream: Bool) throws {
        try send(Self.frame(type: 0x0, flags: endStream ? 0x1 : 0, streamID: streamID, payload: bytes))
    }

    func sendReset(streamID: UInt32, errorCode: UInt32 = 0x8) throws {
        try send(
            Self.frame(
                type: 0x3, flags: 0, streamID: streamID,
                payload: [
                    UInt8(errorCode >> 24), UInt8(errorCode >> 16 & 0xFF), UInt8(errorCode >> 8 & 0xFF),
                    UInt8(errorCode & 0xFF),
                ]))
    }

    /// The next frame, or nil when the peer closed the connection (or 5 s passed).
    func readFrame() -> Frame? {
        while true {
            if pending.count >= 9 {
                let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
                if pending.count >= 9 + length {
                    let streamID =
                        UInt32(pending[5] & 0x7F) << 24 | UInt32(pending[6]) << 16 | UInt32(pending[7]) << 8
                        | UInt32(pending[8])
                    let frame = Frame(
                        type: pending[3], flags: pending[4], streamID: streamID, payload: Array(pending[9..<9 + length])
                    )
                    pending.removeFirst(9 + length)
                    return frame
                }
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            pending += buffer[0..<count]
        }
    }

    /// Reads frames until a HEADERS or DATA frame for `streamID` ends the stream;
    /// returns every header field seen on that stream (decoded). Bounded.
    func readResponse(streamID: UInt32) -> [(String, String)]? {
        var fields: [(String, String)] = []
        for _ in 0..<10_000 {
            guard let frame = readFrame() else { return nil }
            if frame.type == 0x1 {
                // Every header block must pass through the inflater to keep its table in sync.
                let decoded = decode(frame)
                if frame.streamID == streamID {
                    fields += decoded
                    if frame.endStream { return fields }
                }
            } else if frame.type == 0x0, frame.streamID == streamID, frame.endStream {
                return fields
            } else if frame.type == 0x7, frame.payload.count >= 8 {
                let code =
                    UInt32(frame.payload[4]) << 24 | UInt32(frame.payload[5]) << 16 | UInt32(frame.payload[6]) << 8
                    | UInt32(frame.payload[7])
                let last =
                    UInt32(frame.payload[0] & 0x7F) << 24 | UInt32(frame.payload[1]) << 16 | UInt32(frame.payload[2])
                    << 8 | UInt32(frame.payload[3])
                fields += [("goaway", String(code)), ("goaway-last-stream", String(last))]
                if code != 0 { return fields }
            } else if frame.type == 0x3, frame.streamID == streamID {
                return fields + [("rst_stream", String(frame.payload.last ?? 0))]
            }
        }
        return nil
    }

    /// True once the server closed the connection (reading only non-stream frames until then). Bounded.
    func readUntilClosed() -> Bool {
        for _ in 0..<10_000 {
            if readFrame() == nil { return true }
        }
        return false
    }

    /// Reads until a GOAWAY arrives (its error code) or the connection ends (nil). Bounded.
    func readGoAwayCode() -> UInt32? {
        for _ in 0..<100_000 {
            guard let frame = readFrame() else { return nil }
            if frame.type == 0x7, frame.payload.count >= 8 {
                return UInt32(frame.payload[4]) << 24 | UInt32(frame.payload[5]) << 16 | UInt32(frame.payload[6]) << 8
                    | UInt32(frame.payload[7])
            }
        }
        return nil
    }

    private func decode(_ frame: Frame) -> [(String, String)] {
        var payload = frame.payload
        var start = 0
        if frame.flags & 0x8 != 0 { start += 1 + Int(payload[0]) }  // PADDED
        if frame.flags & 0x20 != 0 { start += 5 }  // PRIORITY
        payload = Array(payload[start...])
        var fields: [(String, String)] = []
        payload.withUnsafeBufferPointer { buffer in
            var offset = 0
            while true {
                var nv = nghttp2_nv()
                var flags: Int32 = 0
                let consumed = nghttp2_hd_inflate_hd2(
                    inflater, &nv, &flags, buffer.baseAddress! + offset, buffer.count - offset, 1)
                if consumed < 0 { return }
                offset += consumed
                if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                    fields.append(
                        (
                            String(decoding: UnsafeBufferPointer(start: nv.name, count: nv.namelen), as: UTF8.self),
                            String(decoding: UnsafeBufferPointer(start: nv.value, count: nv.valuelen), as: UTF8.self)
                        ))
                }
                if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
                    nghttp2_hd_inflate_end_headers(inflater)
                    return
                }
                if consumed == 0 && flags == 0 { return }
            }
        }
        return fields
    }
}

/// Runs blocking work on a new thread and awaits it, keeping the cooperative pool free.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

extension Array where Element == (String, String) {
    func value(_ name: String) -> String? { first { $0.0 == name }?.1 }
}
