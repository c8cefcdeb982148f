import Foundation
import StrictJSON
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 exchange's answer, as the demo prints and checks it.
struct DemoHTTPResponse: Sendable {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (StrictJSON's parser), or nil.
    var json: JSONObject? {
        guard case .object(let object)? = try? StrictJSONParser().parse(body) else { return nil }
        return object
    }
}

/// Why an exchange failed (connection, timeout, malformed answer).
struct DemoHTTPError: Error, CustomStringConvertible {
    let description: String
}

/// A deliberately small blocking HTTP/1.1 client: one connection per request
/// (`Connection: close`), send and receive bounded by socket timeouts, the
/// answer framed by Content-Length or by the close. The demo is a plain
/// command-line program without Swift concurrency, so blocking is fine here.
struct DemoHTTPClient: Sendable {
    let host: String
    let port: Int
    var timeoutSeconds = DemoLimits.httpTimeoutSeconds

    func send(method: String, path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws
        -> DemoHTTPResponse
    {
        let descriptor = try connect()
        defer { close(descriptor) }
        var head =
            "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nUser-Agent: iap-credits-demo\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try write(descriptor, Array(head.utf8) + (body ?? []))
        return try Self.parse(try readAll(descriptor))
    }

    private func connect() throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw DemoHTTPError(description: "socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(descriptor)
            throw DemoHTTPError(description: "\(host) is not an IPv4 address")
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw DemoHTTPError(description: "cannot connect to \(host):\(port): errno \(code)")
        }
        return descriptor
    }

    private func write(_ descriptor: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            // A server may answer early (e.g. 413) and close before reading
            // everything: stop sending and read its answer.
            if written < 0 && (errno == EPIPE || errno == ECONNRESET) { return }
            guard written > 0 else { throw DemoHTTPError(description: "send failed: errno \(errno)") }
            offset += written
        }
    }

    private func readAll(_ descriptor: Int32) throws -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while received.count <= DemoLimits.responseBytesMax {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[0..<count])
                if Self.isComplete(received) { return received }
            } else if count == 0 || errno == ECONNRESET {
                return received
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                throw DemoHTTPError(description: "no answer within \(timeoutSeconds) s")
            } else {
                throw DemoHTTPError(description: "recv failed: errno \(errno)")
            }
        }
        throw DemoHTTPError(description: "answer larger than \(DemoLimits.responseBytesMax) bytes")
    }

    /// True once the head and a Content-Length body have arrived.
    private static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard let end = headEnd(bytes) else { return false }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return bytes.count >= end + 4 + length
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func parse(_ bytes: [UInt8]) throws -> DemoHTTPResponse {
        guard let end = headEnd(bytes) else {
            throw DemoHTTPError(description: "connection closed before a complete response head")
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw DemoHTTPError(description: "bad status line")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }) {
            guard body.count >= length else { throw DemoHTTPError(description: "connection closed inside the body") }
            body = Array(body.prefix(length))
        }
        return DemoHTTPResponse(status: status, headers: headers, body: body)
    }
}
