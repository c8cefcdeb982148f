/// One `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER,
/// value OCTET STRING }`, shape checked, with readers for the value types
/// Apple documents (UTF8STRING, IA5STRING, INTEGER, a nested SET).
struct ReceiptAttribute {
    let reader: BERReader
    let element: BERElement
    let type: Int64
    /// The OCTET STRING holding the value's own DER encoding.
    let value: BERElement

    /// What a text field may hold.
    enum TextRule {
        /// Ids (bundle, product, transaction): printable ASCII without spaces.
        case identifier
        /// Valid UTF-8 without control characters (the app version).
        case freeText
    }

    init(_ element: BERElement, in reader: BERReader) throws(AppReceiptError) {
        self.reader = reader
        self.element = element
        guard element.tag == .sequence, element.isConstructed else {
            throw reader.error(.badAttribute, "receipt attribute is \(element.tag), not SEQUENCE", at: element.offset)
        }
        let parts = try reader.children(of: element, countMax: 3, excess: .badAttribute, what: "a receipt attribute")
        guard parts.count == 3 else {
            throw reader.error(
                .badAttribute, "receipt attribute with \(parts.count) of its 3 fields", at: element.offset)
        }
        guard let type = Self.integer(parts[0], in: reader), Self.integer(parts[1], in: reader) != nil else {
            throw reader.error(
                .badAttribute, "receipt attribute type or version is not an INTEGER of 1-8 bytes", at: element.offset)
        }
        guard parts[2].tag == .octetString else {
            throw reader.error(
                .badAttribute, "receipt attribute value is \(parts[2].tag), not OCTET STRING", at: parts[2].offset)
        }
        self.type = type
        self.value = parts[2]
    }

    func fault(_ code: AppReceiptError.Code, _ detail: String) -> AppReceiptError {
        reader.error(code, detail, at: element.offset)
    }

    /// The one element the value's bytes encode, and a reader for it.
    func valueElement() throws(AppReceiptError) -> (BERReader, BERElement) {
        guard value.isConstructed else {
            return (
                reader, try reader.single(in: value.content, depth: value.depth + 1, what: "attribute \(type)'s value")
            )
        }
        let joined = try reader.stringBytes(
            of: value, bytesMax: reader.bytes.count, tooLong: .tooLarge, what: "attribute \(type)'s value")
        let nested = reader.nestedReader(for: value, bytes: joined)
        return (
            nested, try nested.single(in: 0..<joined.count, depth: value.depth + 1, what: "attribute \(type)'s value")
        )
    }

    /// A UTF8STRING value; nil when empty.
    func text(_ rule: TextRule, bytesMax: Int, what: String) throws(AppReceiptError) -> String? {
        let bytes = try stringValue(.utf8String, bytesMax: bytesMax, what: what)
        guard !bytes.isEmpty else { return nil }
        switch rule {
        case .identifier:
            guard bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw fault(.badField, "\(what) is not printable ASCII without spaces")
            }
            return String(decoding: bytes, as: UTF8.self)
        case .freeText:
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw fault(.badField, "\(what) is not UTF-8")
            }
            guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
                throw fault(.badField, "\(what) has a control character")
            }
            return text
        }
    }

    /// An IA5STRING date value of printable ASCII; nil when empty.
    func date(what: String) throws(AppReceiptError) -> AppReceiptDate? {
        let bytes = try stringValue(.ia5String, bytesMax: AppReceiptLimits.dateBytesMax, what: what)
        guard !bytes.isEmpty else { return nil }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw fault(.badField, "\(what) is not printable ASCII")
        }
        return AppReceiptDate(text: String(decoding: bytes, as: UTF8.self))
    }

    /// An INTEGER value of 0...Int32.max (StoreKit's quantity is 1-10).
    func quantity(what: String) throws(AppReceiptError) -> Int {
        let (valueReader, inner) = try valueElement()
        guard inner.tag == .integer, !inner.isConstructed else {
            throw fault(.badField, "\(what) is \(inner.tag), not INTEGER")
        }
        guard let quantity = Self.integer(inner, in: valueReader), (0...Int64(Int32.max)).contains(quantity) else {
            throw fault(.badField, "\(what) is not an INTEGER in 0...\(Int32.max)")
        }
        return Int(quantity)
    }

    private func stringValue(_ tag: BERTag, bytesMax: Int, what: String) throws(AppReceiptError) -> [UInt8] {
        let (valueReader, inner) = try valueElement()
        guard inner.tag == tag else { throw fault(.badField, "\(what) is \(inner.tag), not \(tag)") }
        return try valueReader.stringBytes(of: inner, bytesMax: bytesMax, tooLong: .fieldTooLong, what: what)
    }

    /// A primitive INTEGER of 1 to `integerBytesMax` octets in its minimal
    /// form (X.690 8.3.2: the first nine bits are not all zeros or all
    /// ones), as a two's complement number; nil otherwise.
    static func integer(_ element: BERElement, in reader: BERReader) -> Int64? {
        guard element.tag == .integer, !element.isConstructed,
            (1...AppReceiptLimits.integerBytesMax).contains(element.content.count)
        else { return nil }
        let octets = reader.bytes[element.content]
        let first = octets[octets.startIndex]
        if octets.count > 1 {
            let second = octets[octets.startIndex + 1]
            guard !(first == 0x00 && second & 0x80 == 0), !(first == 0xFF && second & 0x80 != 0) else { return nil }
        }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for octet in octets { value = value << 8 | Int64(octet) }
        return value
    }
}
