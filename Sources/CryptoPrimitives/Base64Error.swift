/// Why a text is not strict base64 or base64url. Carries positions and
/// counts only, never the text, so it is safe to log even when the text
/// was a secret.
public enum Base64Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// The length cannot be a strict encoding: 1 more than a multiple of 4
    /// (no byte ends there), or not a multiple of 4 for padded base64.
    case invalidLength(Int)
    /// A byte outside the alphabet (whitespace, a line break, the other
    /// base64 alphabet, non-ASCII) at this offset.
    case invalidCharacter(offset: Int)
    /// `=` where it may not be: anywhere in base64url, or other than one or
    /// two characters at the end of padded base64.
    case invalidPadding(offset: Int)
    /// The last character carries non-zero bits below the last whole byte:
    /// a second spelling of a value that has exactly one.
    case nonCanonical

    public var description: String {
        switch self {
        case .invalidLength(let length): "a base64 text cannot be \(length) characters long"
        case .invalidCharacter(let offset): "a character outside the base64 alphabet at offset \(offset)"
        case .invalidPadding(let offset): "misplaced '=' padding at offset \(offset)"
        case .nonCanonical: "non-zero trailing bits (not the canonical encoding)"
        }
    }
}
