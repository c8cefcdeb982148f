/// Header fields in arrival order. Names compare case-insensitively; values
/// are kept as received, bytes mapped one-to-one to Latin-1 scalars so that
/// obs-text survives without guessing an encoding.
public struct HTTPHeaders: Sendable, Equatable {
    /// The field lines in order.
    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) { self.fields = fields }

    /// Builds headers from name-value pairs.
    public init(_ pairs: KeyValuePairs<String, String>) {
        fields = pairs.map { Field(name: $0.key, value: $0.value) }
    }

    /// Room for `count` field lines, so a parsed head's lines are stored
    /// without growing the list line by line.
    mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Appends one field line.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every line named `name`.
    public mutating func remove(name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// All values of lines named `name`, in order.
    public func values(_ name: String) -> [String] {
        var values: [String] = []
        for field in fields where field.name.equalsIgnoringASCIICase(name) { values.append(field.value) }
        return values
    }

    /// The first value of `name`, if any.
    public func first(_ name: String) -> String? { values(name).first }

    /// Comma-separated list elements across all lines named `name`, trimmed
    /// and lower-cased, empty elements dropped (RFC 9110 §5.6.1).
    public func listElements(_ name: String) -> [String] {
        values(name).flatMap { value in
            value.split(separator: ",").map { $0.trimmingOWS.lowercasedASCII }.filter { !$0.isEmpty }
        }
    }
}

extension StringProtocol {
    /// ASCII-only lower-casing: header names and tokens are ASCII, and
    /// locale-aware case mapping has no place in protocol comparisons.
    public var lowercasedASCII: String {
        String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Equal after ASCII-only lower-casing, compared byte by byte without building either string.
    public func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        var mine = utf8.makeIterator()
        var theirs = other.utf8.makeIterator()
        while true {
            switch (mine.next(), theirs.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                if a != b && (a | 0x20 != b | 0x20 || !((a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A)) { return false }
            default: return false
            }
        }
    }

    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    public var trimmingOWS: Substring {
        let text = Substring(self)
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isOWS($0) }) else { return "" }
        let end = text.lastIndex(where: { !isOWS($0) })!
        return text[start...end]
    }
}
