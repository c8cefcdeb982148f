import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking socket code on its own thread, never on the cooperative pool.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

struct RawClientError: Error, CustomStringConvertible {
    let description: String
}

/// One parsed HTTP/1.1 response.
struct RawResponse: Sendable {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (Foundation, for assertions only).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
}

/// A tiny blocking HTTP/1.1 client over a raw socket, for tests. Every
/// read is bounded by a receive timeout, so a test never hangs.
/// Used by one thread at a time (handed between threads only whole).
final class RawHTTPClient: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, receiveTimeoutSeconds: Int = 20) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawClientError(description: "socket failed") }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw RawClientError(description: "connect failed: errno \(errno)")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw RawClientError(description: "send failed: errno \(errno)") }
            offset += written
        }
    }

    /// Reads more bytes; false at end of stream. Throws on timeout.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        if count == 0 { return false }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw RawClientError(description: "read timed out") }
        if errno == ECONNRESET { return false }
        throw RawClientError(description: "recv failed: errno \(errno)")
    }

    /// Reads one response (Content-Length framed; 1xx responses skipped);
    /// `toHead`: the answer to a HEAD, whose Content-Length has no body.
    func readResponse(toHead: Bool = false) throws -> RawResponse {
        while true {
            let response = try readOneResponse(toHead: toHead)
            if response.status >= 200 { return response }
        }
    }

    private func readOneResponse(toHead: Bool) throws -> RawResponse {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if let index = Self.find(terminator, in: buffer) {
                headEnd = index
            } else if try !fill() {
                throw RawClientError(description: "connection closed before a response head")
            }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd! + 4)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw RawClientError(description: "bad status line \(lines[0])")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length =
            toHead ? 0 : headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        while buffer.count < length {
            if try !fill() { throw RawClientError(description: "connection closed inside a body") }
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return RawResponse(status: status, headers: headers, body: body)
    }

    /// True when the server closes the connection (before the receive timeout).
    func waitForClose() throws -> Bool {
        while true {
            if try !fill() { return true }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}

/// Raw HTTP/2 frames over a `RawHTTPClient` socket, for the few tests that
/// need a client misbehaving in ways curl and nghttp will not.
extension RawHTTPClient {
    /// One received frame.
    struct Frame {
        let type: UInt8
        let flags: UInt8
        let streamID: UInt32
        let payload: [UInt8]
    }

    static func frame(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8]) -> [UInt8] {
        HTTP2FrameBytes.frame(type: type, flags: flags, streamID: streamID, payload: payload)
    }

    /// An HPACK literal header field without indexing, with the name at
    /// `nameIndex` of the static table and no Huffman coding (RFC 7541 6.2.2).
    static func literal(nameIndex: Int, value: String) -> [UInt8] {
        HTTP2FrameBytes.literalField(nameIndex: nameIndex, value: value)
    }

    /// A GET's header block: :method GET and :scheme http from the static
    /// table, `path`, :authority gateway.test and `extra` as literals.
    static func getBlock(_ path: String, extra: [(nameIndex: Int, value: String)] = []) -> [UInt8] {
        var block: [UInt8] =
            [0x82, 0x86] + literal(nameIndex: 4, value: path) + literal(nameIndex: 1, value: "gateway.test")
        for field in extra { block += literal(nameIndex: field.nameIndex, value: field.value) }
        return block
    }

    /// The bearer token of `GatewayHarness.bearer` as an authorization field
    /// (static table index 23).
    static var bearerField: (nameIndex: Int, value: String) { (23, GatewayHarness.bearer.1) }

    /// The client preface and an empty SETTINGS frame.
    func sendHTTP2Preface() throws {
        try send(
            Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + Self.frame(type: 0x4, flags: 0, streamID: 0, payload: []))
    }

    /// Reads the next frame; nil once the server closed the connection.
    /// Throws when the receive timeout passes first.
    func readFrame() throws -> Frame? {
        while true {
            if buffer.count >= 9 {
                let length = Int(buffer[0]) << 16 | Int(buffer[1]) << 8 | Int(buffer[2])
                if buffer.count - 9 >= length {
                    let streamID =
                        UInt32(buffer[5] & 0x7F) << 24 | UInt32(buffer[6]) << 16 | UInt32(buffer[7]) << 8
                        | UInt32(buffer[8])
                    let frame = Frame(
                        type: buffer[3], flags: buffer[4], streamID: streamID, payload: Array(buffer[9..<(9 + length)]))
                    buffer.removeFirst(9 + length)
                    return frame
                }
            }
            if try !fill() { return nil }
        }
    }

    /// Reads frames until the connection closes or a read times out,
    /// acknowledging nothing; returns what arrived and whether it closed.
    func readFrames() throws -> (frames: [Frame], closed: Bool) {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var closed = false
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
                continue
            }
            if count == 0 || errno == ECONNRESET {
                closed = true
                break
            }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            throw RawClientError(description: "read failed: errno \(errno)")
        }
        var frames: [Frame] = []
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard bytes.count - offset - 9 >= length else { break }
            let streamID =
                UInt32(bytes[offset + 5] & 0x7F) << 24 | UInt32(bytes[offset + 6]) << 16
                | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
            frames.append(
                Frame(
                    type: bytes[offset + 3], flags: bytes[offset + 4], streamID: streamID,
                    payload: Array(bytes[(offset + 9)..<(offset + 9 + length)])))
            offset += 9 + length
        }
        return (frames, closed)
    }
}
