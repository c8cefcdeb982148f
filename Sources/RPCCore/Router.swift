/// Maps `:path`s to unary handlers. Built before the server starts, then immutable.
public struct Router: Sendable {
    /// A handler after type erasure: serialized request in, serialized response out.
    public typealias RawHandler = @Sendable (ServerRequest<[UInt8]>) async throws -> ServerResponse<[UInt8]>

    private var handlers: [String: RawHandler] = [:]
    private var descriptors: [MethodDescriptor] = []
    private var interceptors: [any ServerInterceptor] = []

    public init() {}

    /// Every registered method, in registration order.
    public var methods: [MethodDescriptor] { descriptors }

    /// Registers `handler` for `method`, replacing any earlier registration.
    public mutating func registerUnary<Request: RPCMessage, Response: RPCMessage>(
        _ method: MethodDescriptor,
        requestType: Request.Type = Request.self,
        responseType: Response.Type = Response.self,
        handler: @escaping @Sendable (ServerRequest<Request>) async throws -> ServerResponse<Response>
    ) {
        registerRaw(method) { raw in
            let request: Request
            do {
                request = try Request(serializedBytes: raw.message)
            } catch let error as any RPCErrorConvertible {
                // The message layer knows whether the bytes were the caller's
                // fault (e.g. invalid UTF-8: INVALID_ARGUMENT).
                throw error.rpcError
            } catch {
                throw RPCError(code: .internal, message: "Could not parse the request message", cause: error)
            }
            let typed = ServerRequest(message: request, metadata: raw.metadata, context: raw.context)
            let response = try await handler(typed)
            let bytes: [UInt8]
            do {
                bytes = try response.message.serializedBytes()
            } catch {
                throw RPCError(code: .internal, message: "Could not serialize the response message", cause: error)
            }
            return ServerResponse(
                message: bytes, metadata: response.metadata, trailingMetadata: response.trailingMetadata)
        }
    }

    /// Registers a handler that works on serialized bytes.
    public mutating func registerRaw(_ method: MethodDescriptor, handler: @escaping RawHandler) {
        if handlers.updateValue(handler, forKey: method.path) == nil { descriptors.append(method) }
    }

    /// Runs `interceptor` around every method's handler, registered before
    /// or after this call; the first interceptor added runs first.
    public mutating func intercept(with interceptor: any ServerInterceptor) {
        interceptors.append(interceptor)
    }

    /// The handler for a `:path`, if registered, wrapped in the interceptors.
    public func handler(forPath path: String) -> RawHandler? {
        guard let handler = handlers[path] else { return nil }
        guard !interceptors.isEmpty else { return handler }
        return interceptors.reversed().reduce(handler) { next, interceptor in
            { request in try await interceptor.intercept(request, next: next) }
        }
    }
}
