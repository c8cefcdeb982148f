/// The rate-limit key of a TCP peer ("ip:port" or "[ipv6]:port", as the
/// server reports it): the IPv4 address, or the /64 prefix of an IPv6
/// address (one subscriber usually holds a whole /64, so keying by the full
/// address would let one client rotate through 2^64 keys). IPv4-mapped
/// IPv6 addresses count as their IPv4 address. Pure.
public enum ClientAddressKey {
    /// The key for `peer`; the peer text itself when it does not parse.
    public static func key(forPeer peer: String) -> String {
        if peer.hasPrefix("["), let close = peer.firstIndex(of: "]") {
            let address = peer[peer.index(after: peer.startIndex)..<close]
            return ipv6Key(address) ?? peer
        }
        if let colon = peer.lastIndex(of: ":") { return String(peer[..<colon]) }
        return peer
    }

    private static func ipv6Key(_ address: Substring) -> String? {
        let lowered = address.lowercased()
        if lowered.hasPrefix("::ffff:"), lowered.contains(".") { return String(lowered.dropFirst(7)) }
        guard let groups = expandedGroups(lowered) else { return nil }
        return groups.prefix(4).joined(separator: ":") + "::/64"
    }

    /// The eight groups of an IPv6 text without a zone or embedded IPv4
    /// (inet_ntop's form), "::" expanded; nil when it is not one.
    private static func expandedGroups(_ text: String) -> [String]? {
        let halves = text.split(separator: "::", omittingEmptySubsequences: false).map(String.init)
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [String]? {
            if part.isEmpty { return [] }
            let split = part.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard split.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(\.isHexDigit) }) else { return nil }
            return split.map { group in
                let trimmed = String(group.drop { $0 == "0" })
                return trimmed.isEmpty ? "0" : trimmed
            }
        }
        guard let head = groups(halves[0]) else { return nil }
        if halves.count == 1 { return head.count == 8 ? head : nil }
        guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return nil }
        return head + Array(repeating: "0", count: 8 - head.count - tail.count) + tail
    }
}
