import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 answer from the gateway.
struct HTTPAnswer: Sendable {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    /// The problem `code` of an application/problem+json answer.
    var problemCode: String? {
        guard header("Content-Type")?.hasPrefix("application/problem+json") == true else { return nil }
        return json["code"] as? String
    }
}

struct HTTPExchangeError: Error, CustomStringConvertible {
    let description: String
}

/// A blocking HTTP/1.1 exchange over a fresh connection (`Connection:
/// close`), run on its own thread so the cooperative pool never blocks;
/// every socket operation is bounded by a timeout.
enum HTTPExchange {
    static let timeoutSeconds = 20
    static let answerBytesMax = 1 << 20

    static func send(port: Int, method: String, path: String, headers: [(String, String)], body: [UInt8]?) async throws -> HTTPAnswer {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingSend(port: port, method: method, path: path, headers: headers, body: body) })
            }
        }
    }

    private static func blockingSend(port: Int, method: String, path: String, headers: [(String, String)], body: [UInt8]?) throws -> HTTPAnswer {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw HTTPExchangeError(description: "socket failed") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HTTPExchangeError(description: "connect to \(port) failed: errno \(errno)") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        var offset = 0
        while offset < request.count {
            let written = request[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            // The server may answer (413) and close before reading everything.
            if written <= 0 { break }
            offset += written
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while received.count <= answerBytesMax {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[0..<count])
            } else if count == 0 || errno == ECONNRESET {
                break
            } else if errno == EINTR {
                continue
            } else {
                throw HTTPExchangeError(description: "recv failed or timed out: errno \(errno)")
            }
        }
        return try parse(received)
    }

    static func parse(_ bytes: [UInt8]) throws -> HTTPAnswer {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator }) else {
            throw HTTPExchangeError(description: "no complete response head (\(bytes.count) bytes)")
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw HTTPExchangeError(description: "bad status line \(lines[0])") }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }) {
            body = Array(body.prefix(length))
        }
        return HTTPAnswer(status: status, headers: headers, body: body)
    }
}
