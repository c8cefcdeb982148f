/// One PEM block (RFC 7468): a label such as `CERTIFICATE`, `PUBLIC KEY` or
/// `PRIVATE KEY` and the DER bytes its base64 body encodes. Reading is
/// strict about the block (matching BEGIN and END labels, a body of strict
/// standard base64, line breaks and spaces inside it ignored) and ignores
/// text between blocks, as RFC 7468 allows. The bytes may be a private key:
/// descriptions show the label and the length only.
public struct PEMBlock: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The label of the BEGIN and END lines, e.g. `CERTIFICATE`.
    public let label: String
    /// The decoded body.
    public let der: [UInt8]

    public init(label: String, der: [UInt8]) {
        precondition(!label.isEmpty && !label.contains("-----"), "a PEM label is text without five dashes")
        self.label = label
        self.der = der
    }

    /// The block as PEM text: BEGIN line, base64 in 64-character lines
    /// (RFC 7468 section 2), END line, each ending in a line feed.
    public var text: String {
        let base64 = Array(StrictBase64.encodeStandard(der).utf8)
        var lines = ["-----BEGIN \(label)-----"]
        var start = 0
        while start < base64.count {
            let end = min(start + CryptoLimits.pemLineLengthMax, base64.count)
            lines.append(String(decoding: base64[start..<end], as: UTF8.self))
            start = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every block in `text`, in order.
    public static func blocks(
        in text: some Collection<UInt8>, bytesMax: Int = CryptoLimits.pemTextBytesMax
    ) throws(PEMError) -> [PEMBlock] {
        guard text.count <= bytesMax else { throw .tooLarge(bytesMax: bytesMax) }
        guard let string = String(validating: Array(text), as: UTF8.self) else { throw .notText }
        return try blocks(in: string, bytesMax: bytesMax)
    }

    /// Every block in `text`, in order.
    public static func blocks(in text: String, bytesMax: Int = CryptoLimits.pemTextBytesMax) throws(PEMError)
        -> [PEMBlock]
    {
        guard text.utf8.count <= bytesMax else { throw .tooLarge(bytesMax: bytesMax) }
        var blocks: [PEMBlock] = []
        var open: (label: String, body: [UInt8])?
        for rawLine in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let line = trimmed(rawLine)
            if let label = boundaryLabel(line, kind: "BEGIN") {
                if let open { throw .unterminated(label: open.label) }
                open = (label, [])
            } else if let label = boundaryLabel(line, kind: "END") {
                guard let current = open else { continue }
                guard label == current.label else { throw .mismatchedEnd(begin: current.label, end: label) }
                guard !current.body.isEmpty else { throw .emptyBody(label: label) }
                do {
                    blocks.append(PEMBlock(label: label, der: try StrictBase64.decodeStandard(current.body)))
                } catch {
                    throw .invalidBody(label: label, error)
                }
                open = nil
            } else if open != nil {
                open!.body += line
            }
        }
        if let open { throw .unterminated(label: open.label) }
        guard !blocks.isEmpty else { throw .noBlock }
        return blocks
    }

    /// The only block labelled `label` in `text`.
    public static func single(
        labelled label: String, in text: some Collection<UInt8>, bytesMax: Int = CryptoLimits.pemTextBytesMax
    ) throws(PEMError) -> PEMBlock {
        let found = try blocks(in: text, bytesMax: bytesMax)
        let matching = found.filter { $0.label == label }
        guard matching.count == 1 else { throw .missingLabel(expected: label, found: found.map(\.label)) }
        return matching[0]
    }

    /// The line without spaces, tabs and a carriage return at either end.
    private static func trimmed(_ line: Substring.UTF8View) -> ArraySlice<UInt8> {
        let bytes = ArraySlice(line)
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) })
        else {
            return []
        }
        return bytes[first...last]
    }

    /// The label of a `-----BEGIN label-----` (or END) line, nil for other
    /// lines. Labels are printable ASCII with single inner dashes or spaces
    /// (RFC 7468 section 3).
    private static func boundaryLabel(_ line: ArraySlice<UInt8>, kind: String) -> String? {
        let prefix = Array("-----\(kind) ".utf8), suffix = Array("-----".utf8)
        guard line.count > prefix.count + suffix.count, line.starts(with: prefix), line.reversed().starts(with: suffix)
        else {
            return nil
        }
        let label = line.dropFirst(prefix.count).dropLast(suffix.count)
        let dash = UInt8(ascii: "-")
        guard label.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), label.first != dash, label.last != dash,
            !zip(label, label.dropFirst()).contains(where: { $0 == dash && $1 == dash })
        else { return nil }
        return String(decoding: label, as: UTF8.self)
    }

    public var description: String { "PEMBlock(\(label), \(der.count) bytes)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["label": label], displayStyle: .struct) }
}
