#if canImport(Glibc)
import Glibc
#endif
import CEventIO

/// Non-blocking TCP socket calls, each wrapped once (Linux only).
enum Socket {
    /// A resolved socket address.
    struct Address {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        var family: Int32 { Int32(storage.ss_family) }
    }

    /// Resolves an IP literal; host names go through getaddrinfo, which may
    /// block, so callers run this on a loop thread, never on the cooperative pool.
    static func resolve(host: String, port: Int) throws(SystemError) -> Address {
        var address = Address()
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeBytes(of: v4) { bytes in
                withUnsafeMutableBytes(of: &address.storage) { $0.copyMemory(from: bytes) }
            }
            address.length = socklen_t(MemoryLayout<sockaddr_in>.size)
            return address
        }
        var v6 = sockaddr_in6()
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeBytes(of: v6) { bytes in
                withUnsafeMutableBytes(of: &address.storage) { $0.copyMemory(from: bytes) }
            }
            address.length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            return address
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw SystemError(call: "getaddrinfo(\(host))", errorNumber: EHOSTUNREACH)
        }
        defer { freeaddrinfo(result) }
        withUnsafeMutableBytes(of: &address.storage) { destination in
            destination.copyMemory(
                from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        address.length = first.pointee.ai_addrlen
        return address
    }

    /// A non-blocking listening socket; returns it with the port actually bound.
    static func listen(host: String, port: Int, backlog: Int32) throws(SystemError) -> (fd: Int32, port: Int) {
        var address = try resolve(host: host, port: port)
        let fd = try Syscall.call("socket") {
            socket(
                address.family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do throws(SystemError) {
            var one: Int32 = 1
            try Syscall.call("setsockopt(SO_REUSEADDR)") {
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            let length = address.length
            let bound = withUnsafePointer(to: &address.storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            if bound < 0 { throw SystemError(call: "bind", errorNumber: errno) }
            try Syscall.call("listen") { Glibc.listen(fd, backlog) }
            return (fd, localPort(fd))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Accepts one connection; nil when none is pending.
    static func accept(_ listener: Int32) throws(SystemError) -> (fd: Int32, peer: String)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                Glibc.accept(listener, sa, &length)
            }
        }
        if fd < 0 {
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR || code == ECONNABORTED { return nil }
            throw SystemError(call: "accept4", errorNumber: code)
        }
        // accept4 needs _GNU_SOURCE; set the flags the portable way instead.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        setNoDelay(fd)
        return (fd, describe(storage))
    }

    /// Starts a non-blocking connect; `connected` is false while in progress
    /// (wait for writability, then check `pendingError`).
    static func connect(host: String, port: Int) throws(SystemError) -> (fd: Int32, connected: Bool) {
        var address = try resolve(host: host, port: port)
        let fd = try Syscall.call("socket") {
            socket(
                address.family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        setNoDelay(fd)
        setDeadPeerDetection(fd)
        let length = address.length
        let result = withUnsafePointer(to: &address.storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        if result == 0 { return (fd, true) }
        let code = errno
        if code == EINPROGRESS || code == EINTR { return (fd, false) }
        Glibc.close(fd)
        throw SystemError(call: "connect", errorNumber: code)
    }

    /// The error of a finished non-blocking connect, 0 on success.
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) < 0 { return errno }
        return value
    }

    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// An outgoing connection whose peer went away without a reset (its
    /// host died, a partition, a dropped NAT entry) fails within about a
    /// minute instead of TCP's 15 minutes (unacknowledged data) or 2 hours
    /// (idle): data unacknowledged for 30 s (`TCP_USER_TIMEOUT`), or no
    /// answer to keepalive probes sent after 30 s idle, every 10 s, 3
    /// times. Calls in flight then fail UNAVAILABLE and the next call
    /// connects again, where without it they wait for their deadlines and a
    /// round-robin keeps sending to the dead connection.
    static func setDeadPeerDetection(_ fd: Int32) {
        func set(_ level: Int32, _ option: Int32, _ value: Int32) {
            var value = value
            _ = setsockopt(fd, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        set(SOL_SOCKET, SO_KEEPALIVE, 1)
        set(Int32(IPPROTO_TCP), TCP_KEEPIDLE, deadPeerIdleSeconds)
        set(Int32(IPPROTO_TCP), TCP_KEEPINTVL, deadPeerProbeIntervalSeconds)
        set(Int32(IPPROTO_TCP), TCP_KEEPCNT, deadPeerProbeCount)
        set(Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, deadPeerUnacknowledgedMilliseconds)
    }

    static let deadPeerIdleSeconds: Int32 = 30
    static let deadPeerProbeIntervalSeconds: Int32 = 10
    static let deadPeerProbeCount: Int32 = 3
    static let deadPeerUnacknowledgedMilliseconds: Int32 = 30_000

    static func localPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return port(of: storage)
    }

    static func port(of storage: sockaddr_storage) -> Int {
        var copy = storage
        return withUnsafeBytes(of: &copy) { raw in
            if Int32(storage.ss_family) == AF_INET6 {
                return Int(UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
            }
            return Int(UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    static func describe(_ storage: sockaddr_storage) -> String {
        var copy = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(storage.ss_family)
        withUnsafeBytes(of: &copy) { raw in
            let offset = family == AF_INET6 ? 8 : 4
            _ = inet_ntop(family, raw.baseAddress! + offset, &text, socklen_t(text.count))
        }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(host)]:\(port(of: storage))" : "\(host):\(port(of: storage))"
    }
}
