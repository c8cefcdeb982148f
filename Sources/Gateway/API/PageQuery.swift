/// The paging query of the history routes: `pageSize` (1...`sizeMax`,
/// default `sizeDefault`) and `pageToken` (the opaque cursor the previous
/// page returned). Anything else in the query is refused (400), so a
/// misspelt parameter is never silently ignored.
public struct PageQuery: Sendable, Equatable {
    public let pageSize: Int32
    public let pageToken: String

    /// 0 asks the service for its default size.
    public init(pageSize: Int32 = 0, pageToken: String = "") {
        self.pageSize = pageSize
        self.pageToken = pageToken
    }

    static let tokenBytesMax = 128

    /// Parses `query` (after "?"; nil when absent), with sizes 1...sizeMax.
    static func parse(_ query: Substring?, sizeMax: Int32) throws(ValidationError) -> PageQuery {
        guard let query, !query.isEmpty else { return PageQuery() }
        var size: Int32 = 0
        var token = ""
        var seen: Set<Substring> = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0], value = parts.count == 2 ? parts[1] : ""
            guard seen.insert(name).inserted else {
                throw ValidationError(field: GatewayLimits.echoedFieldName(name), reason: .unknownField)
            }
            switch name {
            case "pageSize":
                // Canonical digits only: no sign, no leading zero (Int32("+5") and Int32("05") would pass).
                guard value.utf8.count <= 9, value.utf8.first.map({ $0 != UInt8(ascii: "0") }) == true,
                    value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                    let parsed = Int32(value), (1...sizeMax).contains(parsed)
                else {
                    throw ValidationError(field: "pageSize", reason: .invalidFormat(rule: "an integer 1...\(sizeMax)"))
                }
                size = parsed
            case "pageToken":
                // Tokens are base64url: nothing to percent-decode.
                guard value.utf8.count <= tokenBytesMax, value.utf8.allSatisfy(Self.isTokenByte) else {
                    throw ValidationError(
                        field: "pageToken", reason: .invalidFormat(rule: "[A-Za-z0-9_-]{0,\(tokenBytesMax)}"))
                }
                token = String(value)
            default:
                throw ValidationError(field: GatewayLimits.echoedFieldName(name), reason: .unknownField)
            }
        }
        return PageQuery(pageSize: size, pageToken: token)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }
}
