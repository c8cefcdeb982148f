/// Why a field was refused: the field's name, the kind of fault and the rule
/// it must match. It never carries the value, which may be personal data.
///
/// Each service maps it at its edge into its own error (PointsService's and
/// PaymentsService's VALIDATION_FAILED, the gateway's 422 problem) under the
/// field names it uses on its wire.
public struct FieldRuleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of fault; a struct of constants so kinds can be added
    /// without breaking anyone's exhaustive `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let name: String

        /// The value is empty.
        public static let missing = Code(name: "missing")
        /// The value has more bytes than `bytesMax`.
        public static let tooLong = Code(name: "tooLong")
        /// The value has a character or a shape the rule does not allow.
        public static let invalidFormat = Code(name: "invalidFormat")

        public var description: String { name }
    }

    /// The field's name as the caller spells it on its wire.
    public let field: String
    public let code: Code
    /// What the value must look like, e.g. `[0-9]{1,32}`.
    public let rule: String
    /// The most UTF-8 bytes the field may hold.
    public let bytesMax: Int

    public init(field: String, code: Code, rule: String, bytesMax: Int) {
        self.field = field
        self.code = code
        self.rule = rule
        self.bytesMax = bytesMax
    }

    /// A short explanation for error messages ("longer than 32 bytes").
    public var problem: String {
        switch code {
        case .missing: return "is required"
        case .tooLong: return "longer than \(bytesMax) bytes"
        default: return "must match \(rule)"
        }
    }

    public var description: String { "\(field) \(problem)" }
}
