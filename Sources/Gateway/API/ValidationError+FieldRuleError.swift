import FieldRules

extension ValidationError {
    /// A shared field rule's refusal as the gateway answers it: too long is
    /// "exceeds N bytes", anything else (empty included: the member is
    /// present) is "must match <rule>", both 422.
    init(_ error: FieldRuleError) {
        if error.code == .tooLong {
            self.init(field: error.field, reason: .tooLong(maximumBytes: error.bytesMax))
        } else {
            self.init(field: error.field, reason: .invalidFormat(rule: error.rule))
        }
    }
}
