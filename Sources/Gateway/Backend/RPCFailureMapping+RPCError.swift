import Contracts
import RPCRuntime

extension RPCFailureMapping {
    /// The trailer PaymentsService adds to TRANSACTION_INVALID: the JWS
    /// verifier's stable failure code.
    public static let jwsFailureMetadataKey = "jws-failure"

    /// The problem for a failed backend call: its gRPC code and
    /// `error-reason` through the one table. Only a `jws-failure` code that
    /// looks like a code ([A-Za-z0-9_.-], at most 64) becomes the detail;
    /// the backend's free-form message never reaches the app.
    public static func problem(for error: RPCError, instance: String?) -> Problem {
        let reason = ErrorReason.reason(of: error)
        let detail = error.metadata[stringValues: jwsFailureMetadataKey].first.flatMap { code -> String? in
            let isCode = !code.isEmpty && code.utf8.count <= 64 && code.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            }
            return isCode ? "jws-failure: \(code)" : nil
        }
        return problem(grpcCode: error.code.rawValue, reason: reason, detail: detail, instance: instance)
    }
}
