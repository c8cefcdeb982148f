import Glibc
import RPCRuntime

extension HostAndPort {
    /// True for an address only this machine can reach: IPv4 127.0.0.0/8,
    /// IPv6 ::1, or the name `localhost` (RFC 6761). Other names are not
    /// resolved: what they point at can change after start-up.
    public var isLoopback: Bool {
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if literal.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            return withUnsafeBytes(of: v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        return false
    }
}
