import Foundation

/// The opaque keyset cursor of ListTransactions: base64url of "v1:<record
/// id>" of the last row already returned. Rows are listed newest first by
/// (created_at, id); the cursor row's exact created_at is read back from
/// the table, so no timestamp is rounded through the token.
enum TransactionPageToken {
    static let bytesMax = 128

    static func encode(lastId: UUID) -> String {
        Data("v1:\(lastId.uuidString.lowercased())".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// nil for an empty token (the first page).
    static func decode(_ token: String) throws(PaymentsError) -> UUID? {
        if token.isEmpty { return nil }
        let invalid = PaymentsError.validationFailed(field: "page_token", problem: "is not a token this service issued")
        guard token.utf8.count <= bytesMax, token.utf8.allSatisfy({ $0 < 0x80 }) else { throw invalid }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8), text.hasPrefix("v1:"),
              let id = UUID(uuidString: String(text.dropFirst(3))) else {
            throw invalid
        }
        return id
    }
}
