/// Assembles a unary call's response on the client from stream events, as a
/// pure value: response headers, one message, then trailers (or a single
/// Trailers-Only HEADERS), or an early end.
public struct ClientResponseStateMachine: Sendable {
    /// A complete successful response, still serialized.
    public struct Response: Sendable, Equatable {
        public var message: [UInt8]
        public var metadata: Metadata
        public var trailingMetadata: Metadata
    }

    enum State: Sendable {
        case awaitingHeaders
        case receivingMessage(initial: Metadata, deframer: MessageDeframer, message: [UInt8]?)
        case finished(Result<Response, RPCError>)
    }

    private(set) var state: State = .awaitingHeaders
    public let messageSizeBytesMax: Int

    /// Data before the response headers cannot come from nghttp2: a bug,
    /// which stops a debug build (`assertionFailure`) and in release fails
    /// the call with INTERNAL. Tests of the release behaviour turn it off.
    public let assertsOnInvariantViolation: Bool

    public init(messageSizeBytesMax: Int, assertsOnInvariantViolation: Bool = true) {
        self.assertsOnInvariantViolation = assertsOnInvariantViolation
        self.messageSizeBytesMax = messageSizeBytesMax
    }

    /// True until the response's first HEADERS arrived (or the call ended).
    public var awaitsResponseHeaders: Bool {
        if case .awaitingHeaders = state { return true }
        return false
    }

    /// The outcome once known.
    public var result: Result<Response, RPCError>? {
        if case .finished(let result) = state { return result }
        return nil
    }

    public mutating func receiveHeaders(_ fields: [HTTPHeaderField], endStream: Bool) {
        switch state {
        case .awaitingHeaders:
            let httpStatus = fields.first(named: ":status").flatMap { Int($0) } ?? 0
            if endStream, httpStatus == 200 || fields.first(named: "grpc-status") != nil {
                // Trailers-Only: status and metadata in one block.
                return finish(trailers: fields, initial: [:], message: nil)
            }
            guard httpStatus == 200 else {
                return fail(
                    RPCError(
                        code: RPCError.Code(httpStatus: httpStatus), message: "Unexpected HTTP status \(httpStatus)"))
            }
            guard let contentType = fields.first(named: "content-type"),
                ServerStreamStateMachine.isGRPCContentType(contentType)
            else {
                return fail(RPCError(code: .unknown, message: "Response content-type is not application/grpc"))
            }
            let initial: Metadata
            do {
                initial = try Metadata.fromWire(fields)
            } catch {
                return fail(error)
            }
            if let encoding = fields.first(named: "grpc-encoding"), encoding != "identity" {
                return fail(RPCError(code: .internal, message: "Response compressed with unsupported \(encoding)"))
            }
            state = .receivingMessage(
                initial: initial, deframer: MessageDeframer(messageSizeBytesMax: messageSizeBytesMax), message: nil)
        case .receivingMessage(let initial, let deframer, let message):
            guard endStream else { return fail(RPCError(code: .internal, message: "Trailers without END_STREAM")) }
            do {
                try deframer.finish()
            } catch {
                return fail(Self.rpcError(for: error))
            }
            finish(trailers: fields, initial: initial, message: message)
        case .finished:
            break
        }
    }

    public mutating func receiveData(_ bytes: [UInt8], endStream: Bool) {
        guard case .receivingMessage(let initial, var deframer, var message) = state else {
            if case .awaitingHeaders = state {
                if assertsOnInvariantViolation {
                    assertionFailure("ClientResponseStateMachine: response data before headers")
                }
                fail(RPCError(code: .internal, message: "internal error: response data before headers"))
            }
            // After the call finished (e.g. failed early), later data is ignored.
            return
        }
        deframer.append(bytes)
        do {
            while let next = try deframer.next() {
                if message != nil {
                    return fail(RPCError(code: .internal, message: "More than one response message for a unary call"))
                }
                message = next
            }
        } catch {
            return fail(Self.rpcError(for: error))
        }
        if endStream {
            return fail(RPCError(code: .internal, message: "Response ended without trailers"))
        }
        state = .receivingMessage(initial: initial, deframer: deframer, message: message)
    }

    /// The stream ended; decides the outcome if nothing did yet.
    public mutating func streamClosed(errorCode: UInt32) {
        guard result == nil else { return }
        fail(
            RPCError(
                code: Self.code(forResetCode: errorCode),
                message: errorCode == HTTP2ErrorCodes.connectionClosed
                    ? "Connection closed before the response completed"
                    : "Stream closed with HTTP/2 error \(errorCode) before the response completed"))
    }

    /// Failure decided locally (deadline, cancellation).
    public mutating func fail(_ error: RPCError) {
        guard result == nil else { return }
        state = .finished(.failure(error))
    }

    private mutating func finish(trailers: [HTTPHeaderField], initial: Metadata, message: [UInt8]?) {
        guard let statusText = trailers.first(named: "grpc-status"), let rawCode = Int(statusText) else {
            return fail(RPCError(code: .internal, message: "Response without grpc-status"))
        }
        let trailing: Metadata
        do {
            trailing = try Metadata.fromWire(trailers)
        } catch {
            return fail(error)
        }
        let code = RPCError.Code(rawValue: rawCode)
        guard code == .ok else {
            let text = trailers.first(named: "grpc-message").map(GRPCMessageEncoding.decode) ?? ""
            return fail(RPCError(code: code, message: text, metadata: trailing))
        }
        guard let message else {
            return fail(RPCError(code: .internal, message: "No response message for a unary call", metadata: trailing))
        }
        state = .finished(.success(Response(message: message, metadata: initial, trailingMetadata: trailing)))
    }

    static func rpcError(for failure: MessageDeframer.Failure) -> RPCError {
        switch failure {
        case .messageTooLarge(let bytes):
            return RPCError(code: .resourceExhausted, message: "Response message of \(bytes) bytes exceeds the limit")
        case .compressedMessage, .invalidFlag:
            return RPCError(code: .internal, message: "Response message uses an unsupported encoding")
        case .truncated:
            return RPCError(code: .internal, message: "Response ended inside a message")
        }
    }

    /// RST_STREAM error codes to gRPC codes, per the gRPC HTTP/2 protocol.
    public static func code(forResetCode errorCode: UInt32) -> RPCError.Code {
        switch errorCode {
        case HTTP2ErrorCodes.connectionClosed, 0x7: return .unavailable  // REFUSED_STREAM
        case 0x8: return .cancelled  // CANCEL
        case 0xB: return .resourceExhausted  // ENHANCE_YOUR_CALM
        case 0xC: return .permissionDenied  // INADEQUATE_SECURITY
        default: return .internal
        }
    }
}
