import StrictJSON

/// What PostgreSQL's jsonb would not keep as the text a caller wrote (a
/// spend's `metadata_json`): a U+0000 character in a string or a key, which
/// jsonb refuses (SQLSTATE 22P05), and a number whose plain decimal form is
/// long. jsonb keeps numbers as `numeric` and prints them with no exponent:
/// `1e131071` is stored in about 30 bytes and read back as 131,072 digits,
/// and past numeric's range it is refused (22003). Both are refused here
/// as the caller's error, before anything is written.
enum JSONBStorability {
    /// Why `value` cannot be stored as written, or nil when it can.
    static func problem(in value: JSONValue, numberDigitsMax: Int) -> String? {
        switch value {
        case .object(let object):
            for (key, member) in object.members {
                if key.utf8.contains(0) { return nullCharacterProblem }
                if let problem = problem(in: member, numberDigitsMax: numberDigitsMax) { return problem }
            }
            return nil
        case .array(let elements):
            for element in elements {
                if let problem = problem(in: element, numberDigitsMax: numberDigitsMax) { return problem }
            }
            return nil
        case .string(let string):
            return string.utf8.contains(0) ? nullCharacterProblem : nil
        case .number(let number):
            guard number.plainDigitCount > numberDigitsMax else { return nil }
            return "has a number of more than \(numberDigitsMax) digits written out without an exponent"
        case .bool, .null:
            return nil
        }
    }

    private static let nullCharacterProblem = "has a U+0000 character, which jsonb cannot store"
}
