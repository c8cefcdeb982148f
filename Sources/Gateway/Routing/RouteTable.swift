/// Matches method and path against `RouteSpec.all` (HEAD as GET). Paths compare segment by
/// segment, byte for byte, without decoding; the query is ignored; a
/// trailing slash or an empty segment is a different path (404). Among
/// matching patterns only the most specific (most literal segments) count,
/// so a literal route is never shadowed by a parameter.
///
/// A lookup reads the request's bytes in place: it finds the segment
/// boundaries once, compares them only with the patterns of as many
/// segments, and makes strings only for the parameters of the route it
/// returns.
public struct RouteTable: Sendable {
    public let specs: [RouteSpec]
    /// Indices into `specs` by segment count, each in table order.
    private let specsBySegmentCount: [[Int]]

    /// Whether a route of `routeMethod` answers a request of `method`: its
    /// own, and HEAD for GET (RFC 9110 9.3.2: a server that answers GET
    /// answers HEAD; the HTTP server sends the same head without the body).
    static func serves(_ routeMethod: String, _ method: String) -> Bool {
        routeMethod == method || (method == "HEAD" && routeMethod == "GET")
    }

    public init(specs: [RouteSpec] = RouteSpec.all) {
        self.specs = specs
        var groups = [[Int]](repeating: [], count: (specs.map(\.segmentBytes.count).max() ?? 0) + 1)
        for (index, spec) in specs.enumerated() { groups[spec.segmentBytes.count].append(index) }
        specsBySegmentCount = groups
    }

    public func match(method: String, target: some StringProtocol) -> RouteMatch {
        resolve(method: method, target: target).match
    }

    /// The verdict and the pattern of the route it concerns (the matched
    /// one, or for 405 the path's): the `route` label of the gateway's
    /// metrics, never the concrete path. nil when no pattern fits.
    public func resolve(method: String, target: some StringProtocol) -> (match: RouteMatch, pattern: String?) {
        if let resolved = target.utf8.withContiguousStorageIfAvailable({ resolve(method: method, targetBytes: $0) }) {
            return resolved
        }
        return Array(target.utf8).withUnsafeBufferPointer { resolve(method: method, targetBytes: $0) }
    }

    private func resolve(method: String, targetBytes bytes: UnsafeBufferPointer<UInt8>) -> (
        match: RouteMatch, pattern: String?
    ) {
        let slash = UInt8(ascii: "/")
        let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        guard pathEnd > 0, bytes[0] == slash else { return (.notFound, nil) }
        var segmentCount = 1
        for index in 1..<pathEnd where bytes[index] == slash { segmentCount += 1 }
        guard segmentCount < specsBySegmentCount.count, !specsBySegmentCount[segmentCount].isEmpty else {
            return (.notFound, nil)
        }
        let group = specsBySegmentCount[segmentCount]
        return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: segmentCount) { segments in
            var start = 1
            var count = 0
            for index in 1...pathEnd where index == pathEnd || bytes[index] == slash {
                segments.initializeElement(at: count, to: start..<index)
                count += 1
                start = index + 1
            }
            defer { segments.deinitialize() }
            let path = UnsafeBufferPointer(segments)
            var best = -1
            var bestFirst = 0
            var hit: Int?
            for index in group where Self.fits(specs[index], path, bytes) {
                let literals = specs[index].literalSegmentCount
                if literals > best {
                    best = literals
                    bestFirst = index
                    hit = nil
                }
                if literals == best, hit == nil, Self.serves(specs[index].method, method) { hit = index }
            }
            guard best >= 0 else { return (.notFound, nil) }
            if let hit {
                let spec = specs[hit]
                var parameters: [String] = []
                for (literal, range) in zip(spec.segmentBytes, path) where literal == nil {
                    parameters.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
                }
                return (
                    .matched(spec.make(parameters), requiresAuthentication: spec.requiresAuthentication), spec.pattern
                )
            }
            var allowed = Set<String>()
            for index in group where specs[index].literalSegmentCount == best && Self.fits(specs[index], path, bytes) {
                allowed.insert(specs[index].method)
                if specs[index].method == "GET" { allowed.insert("HEAD") }
            }
            return (.methodNotAllowed(allowedMethods: allowed.sorted()), specs[bestFirst].pattern)
        }
    }

    /// Whether the path's segments (ranges of `bytes`) fit `spec`: each
    /// literal byte for byte, each parameter non-empty.
    private static func fits(
        _ spec: RouteSpec, _ segments: UnsafeBufferPointer<Range<Int>>, _ bytes: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        for (literal, range) in zip(spec.segmentBytes, segments) {
            if let literal {
                guard literal.count == range.count, bytes[range].elementsEqual(literal) else { return false }
            } else if range.isEmpty {
                return false
            }
        }
        return true
    }
}
