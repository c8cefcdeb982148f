import Foundation

/// The opaque keyset cursor of ListLedger: base64url of "v1:<seq>", where
/// seq is the ledger's insertion sequence of the last row already returned.
enum LedgerPageToken {
    static func encode(lastSequence: Int64) -> String {
        Data("v1:\(lastSequence)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// nil for an empty token (first page).
    static func decode(_ token: String) throws(PointsError) -> Int64? {
        if token.isEmpty { return nil }
        let invalid = PointsError.validationFailed(field: "page_token", problem: "is not a token this service issued")
        guard token.utf8.count <= PointsLimits.pageTokenBytesMax else { throw invalid }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
              text.hasPrefix("v1:"), let sequence = Int64(text.dropFirst(3)), sequence > 0 else { throw invalid }
        return sequence
    }
}
