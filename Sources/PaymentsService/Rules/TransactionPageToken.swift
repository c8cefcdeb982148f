import CryptoPrimitives
import Foundation
import UUIDText

/// The opaque keyset cursor of ListTransactions: base64url of "v1:<record
/// id>" of the last row already returned. Rows are listed newest first by
/// (created_at, id); the cursor row's exact created_at is read back from
/// the table, so no timestamp is rounded through the token.
enum TransactionPageToken {
    static let bytesMax = 128

    static func encode(lastId: UUID) -> String {
        StrictBase64.encodeURL(Array("v1:\(UUIDText.lowercased(lastId))".utf8))
    }

    /// nil for an empty token (the first page).
    static func decode(_ token: String) throws(PaymentsError) -> UUID? {
        if token.isEmpty { return nil }
        let invalid = PaymentsError.validationFailed(field: "page_token", problem: "is not a token this service issued")
        guard token.utf8.count <= bytesMax, let bytes = try? StrictBase64.decodeURL(token),
            let text = String(validating: bytes, as: UTF8.self), text.hasPrefix("v1:"),
            let id = UUID(uuidString: String(text.dropFirst(3)))
        else {
            throw invalid
        }
        return id
    }
}
