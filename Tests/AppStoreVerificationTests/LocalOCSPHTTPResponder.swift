import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.0 OCSP responder for tests: listens on
/// 127.0.0.1 port 0, serves at most `connectionsMax` connections on its own
/// thread, one request per connection.
final class LocalOCSPHTTPResponder: @unchecked Sendable {
    typealias Handler = @Sendable ([UInt8]) -> [UInt8]?

    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var handler: Handler
    private var served = 0
    private var stopped = false

    init(connectionsMax: Int, handler: @escaping Handler) throws {
        self.handler = handler
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 4) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = descriptor
        guard connectionsMax > 0 else { return }
        let thread = Thread { [self] in serve(connectionsMax: connectionsMax) }
        thread.start()
    }

    var servedCount: Int { lock.withLock { served } }

    func setHandler(_ handler: @escaping Handler) { lock.withLock { self.handler = handler } }

    func stop() {
        let alreadyStopped = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        if !alreadyStopped {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private func serve(connectionsMax: Int) {
        for _ in 0..<connectionsMax {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var body: [UInt8]? = nil
        while body == nil, received.count < 1_000_000 {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            received.append(contentsOf: buffer[0..<count])
            body = Self.completeBody(received)
        }
        let currentHandler = lock.withLock { handler }
        guard let body, let answer = currentHandler(body) else { return }
        let head =
            "HTTP/1.0 200 OK\r\nContent-Type: application/ocsp-response\r\nContent-Length: \(answer.count)\r\n\r\n"
        let response = Array(head.utf8) + answer
        _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        lock.withLock { served += 1 }
    }

    private static func completeBody(_ received: [UInt8]) -> [UInt8]? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard received.count >= 4,
            let end = (0...(received.count - 4)).first(where: { Array(received[$0..<$0 + 4]) == separator })
        else { return nil }
        let head = String(decoding: received[..<end], as: UTF8.self).lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return nil }
        let available = received.count - (end + 4)
        return available >= length ? Array(received[(end + 4)..<(end + 4 + length)]) : nil
    }

    deinit { stop() }
}
