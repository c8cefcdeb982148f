import CryptoPrimitives

/// Reads a StoreKit 1 app receipt locally, without calling Apple's
/// deprecated `verifyReceipt`: strict base64, then the PKCS #7 / CMS
/// SignedData container (DER or BER), then the receipt payload inside it.
///
/// Built for hostile input: every size, count and depth is bounded
/// (`AppReceiptLimits`), every malformed receipt is an `AppReceiptError`
/// with a stable code, and no input can make it crash or loop. It does not
/// check the signature (`AppStoreVerification.AppReceiptSignatureVerifier`
/// does, over the same bytes); what it returns only says which
/// transactions to ask Apple about (see `AppReceipt`).
public struct AppReceiptReader: Sendable {
    /// Largest decoded receipt accepted, in bytes.
    public let receiptBytesMax: Int

    public init(receiptBytesMax: Int = AppReceiptLimits.receiptBytesMaxDefault) {
        precondition(receiptBytesMax > 0)
        self.receiptBytesMax = receiptBytesMax
    }

    /// Reads the base64 text an app sends (`receiptData`).
    public func read(base64 text: String) throws(AppReceiptError) -> AppReceipt {
        try read(bytes: decode(base64: text))
    }

    /// The receipt's bytes from the base64 text an app sends, refused by
    /// size before anything is decoded (for a caller that also checks the
    /// signature over the same bytes).
    public func decode(base64 text: String) throws(AppReceiptError) -> [UInt8] {
        guard text.utf8.count <= AppReceiptLimits.base64BytesMax(receiptBytes: receiptBytesMax) else {
            throw AppReceiptError(
                code: .tooLarge, detail: "receipt text longer than \(receiptBytesMax) bytes decoded", byteOffset: 0)
        }
        guard let bytes = try? StrictBase64.decodeStandard(text.utf8) else {
            throw AppReceiptError(code: .notBase64, detail: "receipt is not strict padded base64", byteOffset: 0)
        }
        return bytes
    }

    /// Reads the decoded receipt (DER or BER).
    public func read(bytes: [UInt8]) throws(AppReceiptError) -> AppReceipt {
        guard bytes.count <= receiptBytesMax else {
            throw AppReceiptError(
                code: .tooLarge, detail: "receipt longer than \(receiptBytesMax) bytes", byteOffset: 0)
        }
        let payload = try SignedDataReader.payload(in: BERReader(bytes: bytes, lengthMax: receiptBytesMax))
        return try ReceiptPayloadReader.receipt(in: payload)
    }
}
