/// One HTTP header field as sent or received, name lower-case.
public struct HTTPHeaderField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HTTPHeaderField {
    /// The first value for `name`, if any.
    public func first(named name: String) -> String? {
        first(where: { $0.name == name })?.value
    }
}
