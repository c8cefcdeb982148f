/// "HOST:PORT" with an IPv4 host.
struct HostAndPortText {
    let host: String
    let port: Int

    init(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65_535).contains(port)
        else {
            throw WalkthroughFailure(description: "expected HOST:PORT, got \(text)")
        }
        host = String(text[..<colon])
        self.port = port
    }
}
