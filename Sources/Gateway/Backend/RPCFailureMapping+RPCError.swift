import Contracts
import RPCCore

extension RPCFailureMapping {
    /// The trailer PaymentsService adds to TRANSACTION_INVALID: the JWS
    /// verifier's stable failure code.
    public static let jwsFailureMetadataKey = "jws-failure"
    /// The trailer PaymentsService adds to RECEIPT_INVALID: the receipt
    /// reader's stable failure code (e.g. `notBase64`, `truncated`).
    public static let receiptFailureMetadataKey = "receipt-failure"

    /// The problem for a failed backend call: its gRPC code and
    /// `error-reason` through the one table. Only a `jws-failure` or
    /// `receipt-failure` code that looks like a code ([A-Za-z0-9_.-], at
    /// most 64) becomes the detail; the backend's free-form message never
    /// reaches the app.
    public static func problem(for error: RPCError, instance: String?) -> Problem {
        let reason = ErrorReason.reason(of: error)
        var detail: String?
        for key in [jwsFailureMetadataKey, receiptFailureMetadataKey] where detail == nil {
            if let code = error.metadata[stringValues: key].first, isStableCode(code) { detail = "\(key): \(code)" }
        }
        return problem(grpcCode: error.code.rawValue, reason: reason, detail: detail, instance: instance)
    }

    /// [A-Za-z0-9_.-], 1...64 bytes: a code, not free text.
    static func isStableCode(_ code: String) -> Bool {
        !code.isEmpty && code.utf8.count <= 64
            && code.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            }
    }
}
