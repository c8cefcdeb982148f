/// An ordered JSON object with unique keys. Order matters only for output:
/// responses serialise their members in the order they were built. Keys are
/// the same only when their UTF-8 bytes are (RFC 8259 §8.3), not when
/// Swift's String == calls them canonically equivalent ("K" and U+212A
/// KELVIN SIGN, "é" precomposed and decomposed).
public struct JSONObject: Sendable, Equatable {
    /// The members in document (or construction) order.
    public private(set) var members: [(key: String, value: JSONValue)]
    /// The keys, for O(1) duplicate checks once an object is large (a 64 KiB
    /// body can hold thousands of keys; a scan per insert would be
    /// quadratic). Empty while the object is small: scanning a few keys is
    /// cheaper than hashing them, and most objects are small.
    private var keySet: Set<ExactKey>

    public init() {
        members = []
        keySet = []
    }

    /// Builds an object from pairs; a repeated key is a programming error.
    public init(_ pairs: KeyValuePairs<String, JSONValue>) {
        self.init()
        for (key, value) in pairs {
            let inserted = insert(key, value)
            precondition(inserted, "duplicate JSON key \(key)")
        }
    }

    /// The member named `key`, if any.
    public subscript(key: String) -> JSONValue? {
        for member in members where Self.sameKey(member.key, key) { return member.value }
        return nil
    }

    /// The member keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The number of members.
    public var count: Int { members.count }

    /// Appends a member; returns false (and changes nothing) if `key` exists.
    @discardableResult
    public mutating func insert(_ key: String, _ value: JSONValue) -> Bool {
        if members.count < StrictJSONLimits.linearKeyScanMembersMax {
            for member in members where Self.sameKey(member.key, key) { return false }
        } else {
            if keySet.isEmpty { keySet = Set(members.map { ExactKey(text: $0.key) }) }
            guard keySet.insert(ExactKey(text: key)).inserted else { return false }
        }
        members.append((key, value))
        return true
    }

    /// Appends a member only when the value is present.
    public mutating func insertIfPresent(_ key: String, _ value: JSONValue?) {
        if let value { insert(key, value) }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { sameKey($0.key, $1.key) && $0.value == $1.value }
    }

    private static func sameKey(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.elementsEqual(rhs.utf8) }

    /// A key hashed and compared by its UTF-8 bytes, for the large-object set.
    private struct ExactKey: Hashable {
        let text: String

        static func == (lhs: ExactKey, rhs: ExactKey) -> Bool { sameKey(lhs.text, rhs.text) }

        func hash(into hasher: inout Hasher) {
            var text = self.text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }
}
