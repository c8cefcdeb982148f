import RPCCore

/// One unary RPC with its request and response types, so calls and
/// registrations are type-checked against the contract.
public struct UnaryMethod<Request: ProtobufMessage, Response: ProtobufMessage>: Sendable {
    public let descriptor: MethodDescriptor

    public init(service: String, method: String) {
        descriptor = MethodDescriptor(service: service, method: method)
    }
}

/// A method's names and message types without its generic parameters (for
/// the schema test that compares Swift with the generated descriptors).
public struct MethodSignature: Sendable, Hashable {
    public var path: String
    public var requestName: String
    public var responseName: String
}

extension UnaryMethod {
    public var signature: MethodSignature {
        MethodSignature(path: descriptor.path, requestName: Request.protobufName, responseName: Response.protobufName)
    }
}

extension UnaryCaller {
    /// Calls `method`, returning the response message (metadata dropped).
    public func call<Request, Response>(
        _ method: UnaryMethod<Request, Response>,
        _ request: Request,
        metadata: Metadata = [:],
        timeout: Duration? = nil
    ) async throws -> Response {
        try await unary(
            method.descriptor, request: request, responseType: Response.self, metadata: metadata, timeout: timeout
        ).message
    }
}

extension Router {
    /// Registers a handler that sees the request message and its context and
    /// returns the response message.
    public mutating func register<Request, Response>(
        _ method: UnaryMethod<Request, Response>,
        handler: @escaping @Sendable (Request, ServerRequest<Request>) async throws -> Response
    ) {
        registerUnary(method.descriptor, requestType: Request.self, responseType: Response.self) { request in
            ServerResponse(message: try await handler(request.message, request))
        }
    }
}
