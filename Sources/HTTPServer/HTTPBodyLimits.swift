/// The largest request body a listener accepts, by path: one default and a
/// few paths with a limit of their own (the gateway's receipt route takes
/// whole StoreKit 1 receipts). Decided from the request target alone, before
/// any body byte is read. Pure.
public struct HTTPBodyLimits: Sendable, Equatable {
    /// The limit of every path not listed.
    public let defaultBytesMax: Int
    /// Exact paths (no query) and their limits.
    public let bytesMaxByPath: [String: Int]

    public init(defaultBytesMax: Int = HTTPServerLimits.requestBodyBytesMax, bytesMaxByPath: [String: Int] = [:]) {
        precondition(defaultBytesMax >= 0 && bytesMaxByPath.values.allSatisfy { $0 >= 0 })
        precondition(bytesMaxByPath.count <= HTTPServerLimits.bodyLimitPathCountMax)
        self.defaultBytesMax = defaultBytesMax
        self.bytesMaxByPath = bytesMaxByPath
    }

    /// The limit for an origin-form `target` (its query ignored). The path
    /// is compared with each listed one byte for byte, in place: no string
    /// is made per request (a handful of paths at most).
    public func bytesMax(target: some StringProtocol) -> Int {
        guard !bytesMaxByPath.isEmpty else { return defaultBytesMax }
        let utf8 = target.utf8
        let path = utf8[..<(utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex)]
        for (listed, limit) in bytesMaxByPath where listed.utf8.elementsEqual(path) { return limit }
        return defaultBytesMax
    }

    /// The largest limit of any path (what a whole-connection bound must admit).
    public var largestBytesMax: Int { bytesMaxByPath.values.reduce(defaultBytesMax, max) }
}
