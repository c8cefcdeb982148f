/// The final status of a call as carried in `grpc-status` / `grpc-message`.
public struct RPCStatus: Hashable, Sendable {
    public var code: RPCError.Code
    public var message: String

    public init(code: RPCError.Code, message: String = "") {
        self.code = code
        self.message = message
    }

    public static let ok = RPCStatus(code: .ok)
}
