import CryptoPrimitives

/// The opaque keyset cursor of ListLedger: base64url of "v1:<seq>", where
/// seq is the ledger's insertion sequence of the last row already returned.
enum LedgerPageToken {
    static func encode(lastSequence: Int64) -> String {
        StrictBase64.encodeURL(Array("v1:\(lastSequence)".utf8))
    }

    /// nil for an empty token (first page).
    static func decode(_ token: String) throws(PointsError) -> Int64? {
        if token.isEmpty { return nil }
        let invalid = PointsError.validationFailed(field: "page_token", problem: "is not a token this service issued")
        guard token.utf8.count <= PointsLimits.pageTokenBytesMax, let bytes = try? StrictBase64.decodeURL(token),
            let text = String(validating: bytes, as: UTF8.self), text.hasPrefix("v1:"),
            let sequence = Int64(text.dropFirst(3)), sequence > 0
        else { throw invalid }
        return sequence
    }
}
