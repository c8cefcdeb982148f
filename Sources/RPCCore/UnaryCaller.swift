/// The client side's contract with a transport: one unary call with
/// serialized messages. `RPCRuntime.RPCClient` is the HTTP/2 one; generated
/// contracts and callers see only this, so they need no transport module
/// (as grpc-swift's generated code sees only GRPCCore).
public protocol UnaryCaller: Sendable {
    /// Calls `method` once with a serialized request. Throws `RPCError`.
    func unaryRaw(
        _ method: MethodDescriptor, request: [UInt8], metadata: Metadata, timeout: Duration?
    ) async throws -> ClientResponse<[UInt8]>
}

extension UnaryCaller {
    /// Calls `method` once, serializing the request and parsing the response.
    /// Throws `RPCError` (INTERNAL when either message does not convert, or
    /// whatever the transport or the server answered).
    public func unary<Request: RPCMessage, Response: RPCMessage>(
        _ method: MethodDescriptor,
        request: Request,
        responseType: Response.Type = Response.self,
        metadata: Metadata = [:],
        timeout: Duration? = nil
    ) async throws -> ClientResponse<Response> {
        let requestBytes: [UInt8]
        do {
            requestBytes = try request.serializedBytes()
        } catch {
            throw RPCError(code: .internal, message: "Could not serialize the request", cause: error)
        }
        let raw = try await unaryRaw(method, request: requestBytes, metadata: metadata, timeout: timeout)
        do {
            return ClientResponse(
                message: try Response(serializedBytes: raw.message), metadata: raw.metadata,
                trailingMetadata: raw.trailingMetadata)
        } catch {
            throw RPCError(code: .internal, message: "Could not parse the response", cause: error)
        }
    }
}
