/// An `https://host[:port]` base URL: only HTTPS, no user info, path, query
/// or fragment (Apple's endpoints are absolute paths under the host).
struct BaseURL: Sendable, Hashable {
    let host: String
    let port: Int

    /// The `:authority` pseudo-header (port only when not 443).
    var authority: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? shown : "\(shown):\(port)"
    }

    init(parsing text: String, setting: String) throws(AppStoreServerAPIConfigurationError) {
        let prefix = "https://"
        guard text.lowercased().hasPrefix(prefix) else {
            throw .init(setting: setting, reason: "must start with https://")
        }
        var rest = Substring(text.dropFirst(prefix.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains(where: { "/?#@ \\".contains($0) }) else {
            throw .init(setting: setting, reason: "must be https://host or https://host:port")
        }
        var host = rest
        var port = 443
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw .init(setting: setting, reason: "unclosed [ in the host")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let parsed = Int(after.dropFirst()) else {
                    throw .init(setting: setting, reason: "bad port")
                }
                port = parsed
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let parsed = Int(rest[rest.index(after: colon)...]) else {
                throw .init(setting: setting, reason: "bad port")
            }
            port = parsed
        }
        guard !host.isEmpty, (1...65535).contains(port) else {
            throw .init(setting: setting, reason: "bad host or port")
        }
        self.host = host.lowercased()
        self.port = port
    }
}
