extension HTTPHeaders {
    /// One header field line, its name as received (HTTP/1.1 names keep
    /// their case, HTTP/2's arrive lower-case). RPCCore's `HTTPHeaderField`
    /// is the HTTP/2 transport's own, lower-case only.
    public struct Field: Sendable, Equatable {
        public let name: String
        public let value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }
}
