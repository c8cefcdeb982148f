import Contracts
import RPCCore

/// testing.v1.Echo: answers with what it was sent, fails or waits on request.
/// Used by the interop tests and the benchmark.
enum EchoService {
    /// Registers Echo/Unary on `router`; the router decodes and encodes the
    /// Contracts messages (a request that does not decode is INVALID_ARGUMENT).
    static func register(on router: inout Router) {
        router.registerUnary(
            EchoMethods.unary.descriptor, requestType: EchoRequest.self, responseType: EchoResponse.self
        ) { request in
            try await handle(request.message, metadata: request.metadata, context: request.context)
        }
    }

    static func handle(_ request: EchoRequest, metadata: Metadata, context: ServerContext) async throws
        -> ServerResponse<EchoResponse>
    {
        if request.delayMs > 0 {
            try await Task.sleep(for: .milliseconds(min(request.delayMs, 60_000)))
        }
        if request.failWithCode != 0 {
            throw RPCError(code: RPCError.Code(rawValue: Int(request.failWithCode)), message: request.failWithMessage)
        }
        var response = EchoResponse()
        response.message = request.message
        response.payload = request.payload
        response.deadlineRemainingMs =
            context.deadline.map { deadline in
                let (seconds, attoseconds) = ContinuousClock.now.duration(to: deadline).components
                return max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            } ?? -1
        var echoed = Metadata()
        for key in request.echoMetadataKeys {
            for value in metadata[key] {
                echoed.addValue(value, forKey: key)
                switch value {
                case .string(let text): response.metadata.append(MetadataEntry(key: key, value: text))
                case .binary(let bytes):
                    response.metadata.append(
                        MetadataEntry(key: key, value: bytes.map { String($0) }.joined(separator: ",")))
                }
            }
        }
        return ServerResponse(message: response, metadata: echoed, trailingMetadata: echoed)
    }
}
