/// An ASN.1 tag: class and number (X.690 8.1.2). Whether the element is
/// constructed is kept on `BERElement`, since BER lets most string types be
/// either.
struct BERTag: Equatable, Sendable, CustomStringConvertible {
    enum TagClass: UInt8, Sendable {
        case universal = 0, application = 1, contextSpecific = 2, `private` = 3
    }

    let tagClass: TagClass
    let number: UInt32

    static let endOfContents = BERTag(tagClass: .universal, number: 0)
    static let integer = BERTag(tagClass: .universal, number: 2)
    static let octetString = BERTag(tagClass: .universal, number: 4)
    static let objectIdentifier = BERTag(tagClass: .universal, number: 6)
    static let utf8String = BERTag(tagClass: .universal, number: 12)
    static let sequence = BERTag(tagClass: .universal, number: 16)
    static let set = BERTag(tagClass: .universal, number: 17)
    static let ia5String = BERTag(tagClass: .universal, number: 22)

    static func contextSpecific(_ number: UInt32) -> BERTag {
        BERTag(tagClass: .contextSpecific, number: number)
    }

    var description: String {
        switch self {
        case .integer: "INTEGER"
        case .octetString: "OCTET STRING"
        case .objectIdentifier: "OBJECT IDENTIFIER"
        case .utf8String: "UTF8String"
        case .sequence: "SEQUENCE"
        case .set: "SET"
        case .ia5String: "IA5String"
        default:
            switch tagClass {
            case .universal: "[UNIVERSAL \(number)]"
            case .application: "[APPLICATION \(number)]"
            case .contextSpecific: "[\(number)]"
            case .private: "[PRIVATE \(number)]"
            }
        }
    }
}
