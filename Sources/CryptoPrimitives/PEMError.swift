/// Why a text is not the PEM (RFC 7468) that was expected. Names labels
/// and limits only, never the encoded bytes, so it is safe to log even for
/// a private key file.
public enum PEMError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Longer than the caller's limit: no PEM the caller reads is that large.
    case tooLarge(bytesMax: Int)
    /// Not UTF-8 text.
    case notText
    /// No `-----BEGIN <label>-----` line at all.
    case noBlock
    /// A block whose END line is missing (or a BEGIN inside a block).
    case unterminated(label: String)
    /// An END line whose label is not the BEGIN line's.
    case mismatchedEnd(begin: String, end: String)
    /// The body between BEGIN and END is not strict standard base64.
    case invalidBody(label: String, Base64Error)
    /// The body is empty.
    case emptyBody(label: String)
    /// Blocks were found, but none with the expected label.
    case missingLabel(expected: String, found: [String])

    public var description: String {
        switch self {
        case .tooLarge(let bytesMax): "longer than \(bytesMax) bytes, too large for the PEM expected"
        case .notText: "not PEM text (not UTF-8)"
        case .noBlock: "not PEM (no -----BEGIN ...----- line)"
        case .unterminated(let label): "the \(label) block has no -----END \(label)----- line"
        case .mismatchedEnd(let begin, let end): "a \(begin) block ends with -----END \(end)-----"
        case .invalidBody(let label, let error): "the \(label) block is not base64: \(error)"
        case .emptyBody(let label): "the \(label) block is empty"
        case .missingLabel(let expected, let found):
            "expected a \(expected) block, found \(found.isEmpty ? "none" : found.joined(separator: ", "))"
        }
    }
}
