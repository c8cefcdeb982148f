import Contracts
import RPCCore

/// PaymentsService failures travel as gRPC statuses with the stable reason in
/// the `error-reason` trailer and, for invalid JWS, the verifier's failure
/// code in `jws-failure` (payments.proto's header lists them).
extension PaymentsError: RPCErrorConvertible {
    var rpcError: RPCError {
        var extra: [(String, String)] = []
        if case .transactionInvalid(let failure, _) = self { extra.append(("jws-failure", failure)) }
        if case .receiptInvalid(let code) = self { extra.append(("receipt-failure", code)) }
        return ErrorReason.error(
            code: RPCError.Code(rawValue: grpcStatusCode), reason: reason, message: message, extra: extra)
    }
}
