import Contracts
import RPCCore

/// PointsService failures travel as gRPC statuses with the stable reason in
/// the `error-reason` trailer (points.proto's header lists them).
extension PointsError: RPCErrorConvertible {
    public var rpcError: RPCError {
        ErrorReason.error(code: RPCError.Code(rawValue: grpcStatusCode), reason: reason, message: message)
    }
}
