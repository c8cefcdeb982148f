/// gRPC custom metadata: an ordered multimap from lower-case keys to values.
/// Keys ending in `-bin` carry binary values (base64 on the wire); all other
/// keys carry printable ASCII strings.
public struct Metadata: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One metadata value.
    public enum Value: Sendable, Hashable {
        case string(String)
        case binary([UInt8])
    }

    /// One entry, key always lower-case.
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: Value
    }

    private var entries: [Entry] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, Value)...) {
        for (key, value) in elements { addValue(value, forKey: key) }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    public mutating func addString(_ value: String, forKey key: String) {
        entries.append(Entry(key: Self.lowercasedKey(key), value: .string(value)))
    }

    public mutating func addBinary(_ value: [UInt8], forKey key: String) {
        entries.append(Entry(key: Self.lowercasedKey(key), value: .binary(value)))
    }

    public mutating func addValue(_ value: Value, forKey key: String) {
        entries.append(Entry(key: Self.lowercasedKey(key), value: value))
    }

    /// Removes every value for `key`.
    public mutating func removeAllValues(forKey key: String) {
        let key = Self.lowercasedKey(key)
        entries.removeAll { $0.key == key }
    }

    /// Every value stored under `key`, in insertion order.
    public subscript(key: String) -> [Value] {
        let key = Self.lowercasedKey(key)
        return entries.filter { $0.key == key }.map(\.value)
    }

    /// The string values stored under `key`.
    public subscript(stringValues key: String) -> [String] {
        self[key].compactMap { if case .string(let s) = $0 { s } else { nil } }
    }

    /// The binary values stored under `key`.
    public subscript(binaryValues key: String) -> [[UInt8]] {
        self[key].compactMap { if case .binary(let b) = $0 { b } else { nil } }
    }

    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    public mutating func append(contentsOf other: Metadata) { entries.append(contentsOf: other.entries) }
}

extension Metadata {
    /// Header names reserved by HTTP/2 or gRPC that never appear as custom metadata.
    static func isReserved(_ name: String) -> Bool {
        if isASCII(name) {
            // Byte prefixes equal Character prefixes for ASCII, and are cheaper.
            if name.utf8.first == UInt8(ascii: ":") || name.utf8.starts(with: "grpc-".utf8) { return true }
        } else if name.hasPrefix(":") || name.hasPrefix("grpc-") {
            return true
        }
        switch name {
        case "content-type", "te", "user-agent", "content-length", "host", "connection",
            "transfer-encoding", "keep-alive", "upgrade", "proxy-connection", "accept-encoding":
            return true
        default:
            return false
        }
    }

    /// Builds metadata from received header fields, skipping reserved ones and
    /// decoding `-bin` values. Fails on malformed base64. Names are judged
    /// lower-cased, as keys are stored: "Grpc-Status" is as reserved as
    /// "grpc-status" (HTTP/2 peers send lower case, but this does not rely on it).
    static func fromWire(_ fields: [HTTPHeaderField]) throws(RPCError) -> Metadata {
        var metadata = Metadata()
        for field in fields {
            let key = lowercasedKey(field.name)
            if isReserved(key) { continue }
            if key.hasSuffix("-bin") {
                // Several binary values may be joined with commas by intermediaries.
                for part in field.value.split(separator: ",", omittingEmptySubsequences: true) {
                    guard let bytes = Base64.decode(part.trimmingSpaces()) else {
                        throw RPCError(code: .internal, message: "Malformed base64 in metadata \(key)")
                    }
                    metadata.addBinary(bytes, forKey: key)
                }
            } else {
                metadata.addString(field.value, forKey: key)
            }
        }
        return metadata
    }

    /// `name.lowercased()`, without the copy for the usual ASCII name that
    /// holds no upper-case letter (HTTP/2 sends names in lower case).
    static func lowercasedKey(_ name: String) -> String {
        guard isASCII(name), !name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            return name.lowercased()
        }
        return name
    }

    /// Header fields for the wire; binary values are base64 encoded (padded).
    /// Entries whose key or value cannot be sent legally are dropped. Public
    /// for transports, which put them after their own pseudo-headers.
    public func wireFields() -> [HTTPHeaderField] {
        var fields: [HTTPHeaderField] = []
        fields.reserveCapacity(entries.count)
        for entry in entries where !Metadata.isReserved(entry.key) && Metadata.isValidKey(entry.key) {
            switch entry.value {
            case .binary(let bytes):
                guard entry.key.hasSuffix("-bin") else { continue }
                fields.append(HTTPHeaderField(name: entry.key, value: Base64.encode(bytes)))
            case .string(let string):
                guard !entry.key.hasSuffix("-bin") else {
                    fields.append(HTTPHeaderField(name: entry.key, value: Base64.encode(Array(string.utf8))))
                    continue
                }
                guard string.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else { continue }
                // A field value has no leading or trailing whitespace (RFC
                // 9110 5.5; an HTTP/2 peer drops a field that has some).
                fields.append(HTTPHeaderField(name: entry.key, value: Self.trimmingSpaces(string)))
            }
        }
        return fields
    }

    private static func trimmingSpaces(_ string: String) -> String {
        let bytes = string.utf8
        guard bytes.first == 0x20 || bytes.last == 0x20 else { return string }
        guard let first = bytes.firstIndex(where: { $0 != 0x20 }), let last = bytes.lastIndex(where: { $0 != 0x20 })
        else { return "" }
        return String(string[first...last])
    }

    private static func isASCII(_ string: String) -> Bool {
        string.utf8.allSatisfy { $0 < 0x80 }
    }

    static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty
            && key.utf8.allSatisfy { byte in
                (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F
                    || byte == 0x2E
            }
    }
}
