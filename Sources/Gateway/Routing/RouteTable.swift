/// Matches method and path against `RouteSpec.all`. Paths compare segment by
/// segment without decoding; the query is ignored; a trailing slash or an
/// empty segment is a different path (404). Among matching patterns only the
/// most specific (most literal segments) count, so a literal route is never
/// shadowed by a parameter.
public struct RouteTable: Sendable {
    public let specs: [RouteSpec]

    public init(specs: [RouteSpec] = RouteSpec.all) { self.specs = specs }

    public func match(method: String, target: some StringProtocol) -> RouteMatch {
        resolve(method: method, target: target).match
    }

    /// The verdict and the pattern of the route it concerns (the matched
    /// one, or for 405 the path's): the `route` label of the gateway's
    /// metrics, never the concrete path. nil when no pattern fits.
    public func resolve(method: String, target: some StringProtocol) -> (match: RouteMatch, pattern: String?) {
        let utf8 = target.utf8
        let pathBytes = utf8[..<(utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex)]
        guard pathBytes.first == UInt8(ascii: "/") else { return (.notFound, nil) }
        let segments = pathBytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }

        var candidates: [(spec: RouteSpec, parameters: [String])] = []
        for spec in specs where spec.segments.count == segments.count {
            if let parameters = Self.parameters(of: segments, against: spec.segments) {
                candidates.append((spec, parameters))
            }
        }
        guard let best = candidates.map(\.spec.literalSegmentCount).max() else { return (.notFound, nil) }
        let mostSpecific = candidates.filter { $0.spec.literalSegmentCount == best }
        if let hit = mostSpecific.first(where: { $0.spec.method == method }) {
            return (.matched(hit.spec.make(hit.parameters), requiresAuthentication: hit.spec.requiresAuthentication), hit.spec.pattern)
        }
        return (.methodNotAllowed(allowedMethods: Array(Set(mostSpecific.map(\.spec.method))).sorted()), mostSpecific.first?.spec.pattern)
    }

    /// The captured parameters when `segments` fit `pattern`, else nil.
    private static func parameters(of segments: [String], against pattern: [Substring]) -> [String]? {
        guard segments.count == pattern.count else { return nil }
        var parameters: [String] = []
        for (segment, expected) in zip(segments, pattern) {
            if expected.hasPrefix("{") {
                guard !segment.isEmpty else { return nil }
                parameters.append(segment)
            } else if segment != expected {
                return nil
            }
        }
        return parameters
    }
}
