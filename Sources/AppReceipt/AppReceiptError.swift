/// Why a receipt could not be read: a stable code, a short description of
/// the construct at fault, and where (byte offset). It never quotes receipt
/// content, so it is safe to log.
///
/// No code is retryable: sending the same receipt again gives the same
/// answer. A caller refuses the request (the app should send a fresh
/// receipt) rather than retry.
public struct AppReceiptError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of fault; a struct of constants so codes can be added
    /// without breaking anyone's exhaustive `switch`. `name` is stable.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let name: String

        /// The text is not strict standard base64 (alphabet `A-Z a-z 0-9 + /`,
        /// `=` padding to a multiple of 4, zero trailing bits, no whitespace).
        public static let notBase64 = Code(name: "notBase64")
        /// The receipt is larger than the reader's `receiptBytesMax`.
        public static let tooLarge = Code(name: "tooLarge")
        /// The bytes end inside an element, or an indefinite-length element
        /// has no end-of-contents marker.
        public static let truncated = Code(name: "truncated")
        /// An element has a tag that cannot stand there (or a malformed tag).
        public static let badTag = Code(name: "badTag")
        /// A length that BER forbids: indefinite on a primitive element, the
        /// reserved 0xFF form, an end-of-contents marker with content.
        public static let badLength = Code(name: "badLength")
        /// A declared length with more than `lengthOctetsMax` octets, or
        /// larger than the whole receipt may be (`receiptBytesMax`).
        public static let lengthOverflow = Code(name: "lengthOverflow")
        /// Elements nest deeper than `AppReceiptLimits.depthMax`.
        public static let tooDeep = Code(name: "tooDeep")
        /// More attributes or in-app purchases than the limits allow.
        public static let tooMany = Code(name: "tooMany")
        /// Bytes after the receipt's outer element (or after the payload SET).
        public static let trailingData = Code(name: "trailingData")
        /// The container is not CMS SignedData over `id-data`.
        public static let notSignedData = Code(name: "notSignedData")
        /// The SignedData has no encapsulated content (a detached signature).
        public static let missingPayload = Code(name: "missingPayload")
        /// A receipt attribute is not `SEQUENCE { INTEGER, INTEGER, OCTET STRING }`.
        public static let badAttribute = Code(name: "badAttribute")
        /// A field the reader uses has the wrong ASN.1 type, invalid UTF-8,
        /// characters outside its rule, or an impossible value.
        public static let badField = Code(name: "badField")
        /// A field the reader uses is longer than its limit.
        public static let fieldTooLong = Code(name: "fieldTooLong")
        /// A field the reader uses appears twice in one set.
        public static let duplicateField = Code(name: "duplicateField")
        /// A field the reader needs is absent (bundle id, transaction id).
        public static let missingField = Code(name: "missingField")

        public var description: String { name }
    }

    public let code: Code
    /// The construct at fault, e.g. "in-app purchase field 1703"; never content.
    public let detail: String
    /// Offset in the decoded receipt of the element at fault (of the
    /// enclosing string when the fault lies in a string Apple split into
    /// segments); 0 for base64 and size faults.
    public let byteOffset: Int

    public init(code: Code, detail: String, byteOffset: Int) {
        self.code = code
        self.detail = detail
        self.byteOffset = byteOffset
    }

    public var description: String { "\(code.name): \(detail) at byte \(byteOffset)" }
}
