import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The default `OCSPFetcher`: a plain HTTP/1.0 POST (Apple's responders are
/// `http://ocsp.apple.com/...`; OCSP answers are signed, so no TLS is needed).
/// Each request runs its blocking socket calls on a dedicated thread, with
/// send/receive timeouts, and resumes the caller through a continuation, so
/// the cooperative pool is never blocked.
public struct HTTPOCSPFetcher: OCSPFetcher {
    /// Applied to connect, each send and each receive.
    public let timeoutMilliseconds: Int

    public init(timeoutMilliseconds: Int = 10_000) {
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func fetch(requestDER: [UInt8], responderURL: String) async throws(OCSPFetchError) -> [UInt8] {
        let target = try HTTPTarget(url: responderURL)
        guard requestDER.count <= VerificationLimits.ocspResponseBytesMax else {
            throw OCSPFetchError(reason: "request too large")
        }
        guard Self.inFlight.tryAcquire() else { throw OCSPFetchError(reason: "too many OCSP fetches in flight") }
        let timeout = timeoutMilliseconds
        let result: Result<[UInt8], OCSPFetchError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                let outcome = Self.post(requestDER, to: target, timeoutMilliseconds: timeout)
                Self.inFlight.release()
                continuation.resume(returning: outcome)
            }
            thread.name = "ocsp-fetch"
            thread.start()
        }
        return try result.get()
    }

    /// Bounds the dedicated threads alive at once; beyond it a fetch fails
    /// fast (and the verification is `.retryable`) instead of piling up threads.
    private static let inFlight = FetchSlots(limit: VerificationLimits.ocspFetchesInFlightMax)

    /// A counter of in-flight fetches with a fixed limit.
    final class FetchSlots: @unchecked Sendable {
        private let lock = NSLock()
        private var used = 0
        let limit: Int

        init(limit: Int) { self.limit = limit }

        func tryAcquire() -> Bool {
            lock.withLock {
                guard used < limit else { return false }
                used += 1
                return true
            }
        }

        func release() { lock.withLock { used -= 1 } }
    }

    /// Host, port and path of an `http://` URL.
    struct HTTPTarget: Sendable {
        let host: String
        let port: String
        let path: String

        init(url: String) throws(OCSPFetchError) {
            guard url.hasPrefix("http://") else {
                throw OCSPFetchError(reason: "only http:// responders are supported")
            }
            let rest = url.dropFirst("http://".count)
            let authority = rest.prefix { $0 != "/" }
            let pathPart = rest.dropFirst(authority.count)
            path = pathPart.isEmpty ? "/" : String(pathPart)
            if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
                host = String(authority[..<colon])
                port = String(authority[authority.index(after: colon)...])
            } else {
                host = String(authority)
                port = "80"
            }
            guard !host.isEmpty, !host.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " }),
                !path.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " }),
                let portNumber = Int(port), (1...65535).contains(portNumber)
            else { throw OCSPFetchError(reason: "bad responder URL") }
        }
    }

    /// Blocking: call only on a dedicated thread.
    static func post(_ body: [UInt8], to target: HTTPTarget, timeoutMilliseconds: Int) -> Result<
        [UInt8], OCSPFetchError
    > {
        let socketDescriptor: Int32
        switch openConnection(to: target, timeoutMilliseconds: timeoutMilliseconds) {
        case .success(let descriptor): socketDescriptor = descriptor
        case .failure(let error): return .failure(error)
        }
        defer { close(socketDescriptor) }
        let hostHeader = target.port == "80" ? target.host : "\(target.host):\(target.port)"
        let head =
            "POST \(target.path) HTTP/1.0\r\nHost: \(hostHeader)\r\n"
            + "Content-Type: application/ocsp-request\r\nAccept: application/ocsp-response\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes {
                send(socketDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return .failure(OCSPFetchError(reason: "send failed (errno \(errno))")) }
            sent += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let responseBytesMax = VerificationLimits.ocspResponseBytesMax + 16 * 1024
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return .failure(OCSPFetchError(reason: "receive failed (errno \(errno))")) }
            if count == 0 { break }
            response.append(contentsOf: buffer[0..<count])
            guard response.count <= responseBytesMax else {
                return .failure(OCSPFetchError(reason: "response too large"))
            }
        }
        return parseResponse(response)
    }

    /// Splits an HTTP/1.x response; only 200 with a body is usable.
    static func parseResponse(_ response: [UInt8]) -> Result<[UInt8], OCSPFetchError> {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard
            let headerEnd = (0..<max(0, response.count - 3)).first(where: { Array(response[$0..<$0 + 4]) == separator })
        else { return .failure(OCSPFetchError(reason: "incomplete HTTP response")) }
        let head = String(decoding: response[..<headerEnd], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), statusParts[1] == "200" else {
            return .failure(OCSPFetchError(reason: "HTTP status \(statusParts.dropFirst().first ?? "?")"))
        }
        var body = Array(response[(headerEnd + 4)...])
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2, pair[0].lowercased() == "content-length" else { continue }
            guard let length = Int(pair[1].trimmingCharacters(in: .whitespaces)), length <= body.count else {
                return .failure(OCSPFetchError(reason: "truncated HTTP body"))
            }
            body = Array(body[..<length])
        }
        guard !body.isEmpty, body.count <= VerificationLimits.ocspResponseBytesMax else {
            return .failure(OCSPFetchError(reason: "empty or oversized OCSP body"))
        }
        return .success(body)
    }

    private static func openConnection(to target: HTTPTarget, timeoutMilliseconds: Int) -> Result<Int32, OCSPFetchError>
    {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(target.host, target.port, &hints, &list) == 0, let first = list else {
            return .failure(OCSPFetchError(reason: "cannot resolve responder host"))
        }
        defer { freeaddrinfo(list) }
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: Int((timeoutMilliseconds % 1000) * 1000))
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                return .success(descriptor)
            }
            close(descriptor)
        }
        return .failure(OCSPFetchError(reason: "cannot connect to responder"))
    }
}
