/// Why a message could not be converted to or from protobuf wire bytes.
public struct ProtobufError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The kind of failure; stable for callers that map it to a status.
    public enum Kind: String, Sendable {
        /// The bytes are not a valid encoding of the message.
        case malformedWire
        /// A string field holds bytes that are not UTF-8.
        case invalidUTF8
        /// A string contains NUL, which protobuf-c's C strings cannot carry.
        case embeddedNUL
        /// The Swift type and the descriptor disagree (a programming error
        /// caught by ContractsTests).
        case schemaMismatch
        /// The message nests deeper than `ProtobufLimits.nestingDepthMax`.
        case tooDeep
    }

    public var kind: Kind
    public var detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue): \(detail)" }
}

/// Limits of the protobuf bridge, kept in one place.
public enum ProtobufLimits {
    /// Deepest message nesting accepted in either direction.
    public static let nestingDepthMax = 32
}
