/// The life of one unary call on the server, as a pure value with no I/O.
/// States are named by the client half, then the server half. The owner feeds
/// events and performs the returned actions, the only place with side effects.
public struct ServerStreamStateMachine: Sendable {
    /// What the request headers said, once accepted.
    public struct RequestHead: Sendable, Equatable {
        public var method: MethodDescriptor
        public var metadata: Metadata
        public var deadline: ContinuousClock.Instant?
    }

    enum State: Sendable {
        /// Nothing received yet.
        case clientIdleServerIdle
        /// Headers accepted; the request body is arriving.
        case clientOpenServerIdle(RequestHead, MessageDeframer, message: [UInt8]?)
        /// The request is complete and the handler runs.
        case clientClosedServerIdle(RequestHead)
        /// A response was sent or the stream went away.
        case clientClosedServerClosed
    }

    public enum OnReceiveHeaders: Sendable, Equatable {
        /// The stream was already answered (e.g. trailers after a deadline
        /// answer): nothing more may be sent on it.
        case none
        /// Wait for the body; arm a deadline timer when `head.deadline` is set.
        case accept(RequestHead)
        /// Answer with these headers, ending the stream (Trailers-Only or a plain HTTP error).
        case respond([HTTPHeaderField])
    }

    public enum OnReceiveData: Sendable, Equatable {
        case none
        /// Start the handler with this complete request message.
        case runHandler(RequestHead, message: [UInt8])
        /// Answer with these headers, ending the stream.
        case respond([HTTPHeaderField])
    }

    public enum OnHandlerFinished: Sendable, Equatable {
        /// The stream is already closed; drop the result.
        case none
        case send(headers: [HTTPHeaderField], data: [UInt8], trailers: [HTTPHeaderField])
        case respond([HTTPHeaderField])
    }

    public enum OnDeadlineExpired: Sendable, Equatable {
        case none
        /// Cancel the handler if one runs and answer DEADLINE_EXCEEDED.
        case cancelAndRespond([HTTPHeaderField])
    }

    public enum OnStreamClosed: Sendable, Equatable {
        case none
        /// The peer went away while the handler ran: cancel it.
        case cancelHandler
    }

    private(set) var state: State = .clientIdleServerIdle
    public let limits: RPCLimits
    /// An event that cannot happen in the current state (nghttp2 delivers
    /// HEADERS before DATA and nothing after END_STREAM; a handler starts
    /// only after the request is complete) is a bug: it stops a debug build
    /// at once (`assertionFailure`), and in release ends the stream with
    /// INTERNAL. Tests of the release behaviour turn the assertion off.
    public let assertsOnInvariantViolation: Bool

    public init(limits: RPCLimits = .default, assertsOnInvariantViolation: Bool = true) {
        self.limits = limits
        self.assertsOnInvariantViolation = assertsOnInvariantViolation
    }

    /// The typed error for an impossible event (see `assertsOnInvariantViolation`).
    private func invariantViolated(_ event: String) -> RPCError {
        if assertsOnInvariantViolation { assertionFailure("ServerStreamStateMachine: \(event) in \(state)") }
        return RPCError(code: .internal, message: "internal error: \(event)")
    }

    public mutating func receiveHeaders(
        _ fields: [HTTPHeaderField],
        endStream: Bool,
        now: ContinuousClock.Instant,
        isKnownPath: (String) -> Bool
    ) -> OnReceiveHeaders {
        if case .clientClosedServerClosed = state { return .none }
        guard case .clientIdleServerIdle = state else {
            return close(with: RPCError(code: .internal, message: "Unexpected headers"))
        }
        if fields.first(named: ":method") != "POST" {
            state = .clientClosedServerClosed
            return .respond([HTTPHeaderField(name: ":status", value: "405")])
        }
        guard let contentType = fields.first(named: "content-type"), Self.isGRPCContentType(contentType) else {
            state = .clientClosedServerClosed
            return .respond([HTTPHeaderField(name: ":status", value: "415")])
        }
        guard let path = fields.first(named: ":path"), let method = MethodDescriptor(path: path), isKnownPath(path)
        else {
            let path = fields.first(named: ":path") ?? ""
            return close(with: RPCError(code: .unimplemented, message: "Method not found: \(path)"))
        }
        if let encoding = fields.first(named: "grpc-encoding"), encoding != "identity" {
            return close(
                with: RPCError(code: .unimplemented, message: "Compression \(encoding) is not supported"),
                extra: [HTTPHeaderField(name: "grpc-accept-encoding", value: "identity")])
        }
        var deadline: ContinuousClock.Instant?
        if let timeout = fields.first(named: "grpc-timeout") {
            guard let duration = GRPCTimeout.parse(timeout) else {
                return close(with: RPCError(code: .internal, message: "Malformed grpc-timeout"))
            }
            deadline = now.advanced(by: min(duration, limits.deadlineMax))
        }
        let metadata: Metadata
        do {
            metadata = try Metadata.fromWire(fields)
        } catch {
            return close(with: error)
        }
        let head = RequestHead(method: method, metadata: metadata, deadline: deadline)
        if endStream {
            return close(with: RPCError(code: .internal, message: "Missing request message"))
        }
        state = .clientOpenServerIdle(
            head, MessageDeframer(messageSizeBytesMax: limits.messageSizeBytesMax), message: nil)
        return .accept(head)
    }

    public mutating func receiveData(_ bytes: [UInt8], endStream: Bool) -> OnReceiveData {
        let head: RequestHead
        var deframer: MessageDeframer
        var message: [UInt8]?
        switch state {
        case .clientOpenServerIdle(let openHead, let openDeframer, let openMessage):
            (head, deframer, message) = (openHead, openDeframer, openMessage)
        case .clientClosedServerClosed, .clientIdleServerIdle, .clientClosedServerIdle:
            return dataOutsideTheRequest()
        }
        state = .clientClosedServerClosed  // Avoid a copy of the deframer while mutating.
        deframer.append(bytes)
        do {
            while let next = try deframer.next() {
                if message != nil { return respond(Self.tooManyMessages) }
                message = next
            }
            // A second message is refused at its length prefix, before any
            // of its body is buffered (up to `messageSizeBytesMax` otherwise).
            if message != nil && deframer.awaitsMessageBody { return respond(Self.tooManyMessages) }
            if endStream { try deframer.finish() }
        } catch {
            return respond(Self.rpcError(for: error))
        }
        guard endStream else {
            state = .clientOpenServerIdle(head, deframer, message: message)
            return .none
        }
        guard let message else {
            return respond(RPCError(code: .internal, message: "Missing request message"))
        }
        state = .clientClosedServerIdle(head)
        return .runHandler(head, message: message)
    }

    /// The connection holds as many request bytes as it may
    /// (`RPCLimits.requestBytesBufferedPerConnectionMax`) and refused this
    /// stream's DATA: answer RESOURCE_EXHAUSTED and drop what it buffered.
    public mutating func bufferedBytesLimitExceeded() -> OnReceiveData {
        switch state {
        case .clientOpenServerIdle:
            return respond(
                RPCError(
                    code: .resourceExhausted,
                    message:
                        "Request bytes buffered on this connection exceed \(limits.requestBytesBufferedPerConnectionMax)"
                ))
        case .clientClosedServerClosed, .clientIdleServerIdle, .clientClosedServerIdle:
            return dataOutsideTheRequest()
        }
    }

    /// Request data in a state that takes none: after the answer the peer
    /// may still be sending (ignored); before the headers or after
    /// END_STREAM it cannot come from nghttp2 (an invariant violation).
    private mutating func dataOutsideTheRequest() -> OnReceiveData {
        switch state {
        case .clientIdleServerIdle: return respond(invariantViolated("request data before headers"))
        case .clientClosedServerIdle: return respond(invariantViolated("request data after END_STREAM"))
        case .clientOpenServerIdle, .clientClosedServerClosed: return .none
        }
    }

    /// True while request bytes arrive and are buffered here; in every other
    /// state the stream holds none (handed to the handler, or dropped).
    public var isReceivingRequest: Bool {
        if case .clientOpenServerIdle = state { return true }
        return false
    }

    public mutating func handlerFinished(_ result: Result<ServerResponse<[UInt8]>, RPCError>) -> OnHandlerFinished {
        switch state {
        case .clientClosedServerIdle:
            break
        case .clientClosedServerClosed:
            // The deadline or the peer's reset came first: drop the result.
            return .none
        case .clientIdleServerIdle, .clientOpenServerIdle:
            let error = invariantViolated("a handler finished before its request was complete")
            state = .clientClosedServerClosed
            return .respond(Self.trailersOnly(error))
        }
        state = .clientClosedServerClosed
        switch result {
        case .failure(let error):
            return .respond(Self.trailersOnly(error))
        case .success(let response):
            guard response.message.count <= limits.messageSizeBytesMax else {
                return .respond(
                    Self.trailersOnly(
                        RPCError(
                            code: .resourceExhausted,
                            message: "Response message larger than \(limits.messageSizeBytesMax) bytes")))
            }
            let headers =
                [
                    HTTPHeaderField(name: ":status", value: "200"),
                    HTTPHeaderField(name: "content-type", value: "application/grpc"),
                ] + response.metadata.wireFields()
            let trailers = [HTTPHeaderField(name: "grpc-status", value: "0")] + response.trailingMetadata.wireFields()
            return .send(headers: headers, data: MessageFramer.frame(response.message), trailers: trailers)
        }
    }

    public mutating func deadlineExpired() -> OnDeadlineExpired {
        switch state {
        case .clientOpenServerIdle, .clientClosedServerIdle:
            state = .clientClosedServerClosed
            return .cancelAndRespond(Self.trailersOnly(RPCError(code: .deadlineExceeded, message: "Deadline exceeded")))
        case .clientClosedServerClosed:
            // The timer fired after the stream ended: nothing to do.
            return .none
        case .clientIdleServerIdle:
            let error = invariantViolated("a deadline before the request headers armed one")
            state = .clientClosedServerClosed
            return .cancelAndRespond(Self.trailersOnly(error))
        }
    }

    public mutating func streamClosed() -> OnStreamClosed {
        defer { state = .clientClosedServerClosed }
        if case .clientClosedServerIdle = state { return .cancelHandler }
        return .none
    }

    // MARK: Helpers

    private mutating func close(with error: RPCError, extra: [HTTPHeaderField] = []) -> OnReceiveHeaders {
        state = .clientClosedServerClosed
        return .respond(Self.trailersOnly(error) + extra)
    }

    private mutating func respond(_ error: RPCError) -> OnReceiveData {
        state = .clientClosedServerClosed
        return .respond(Self.trailersOnly(error))
    }

    private static let tooManyMessages = RPCError(
        code: .internal, message: "Too many request messages for a unary call")

    static func rpcError(for failure: MessageDeframer.Failure) -> RPCError {
        switch failure {
        case .messageTooLarge(let bytes):
            return RPCError(code: .resourceExhausted, message: "Request message of \(bytes) bytes exceeds the limit")
        case .compressedMessage:
            return RPCError(code: .internal, message: "Compressed message without grpc-encoding")
        case .invalidFlag(let flag):
            return RPCError(code: .internal, message: "Invalid message flag \(flag)")
        case .truncated(let bytes):
            return RPCError(code: .internal, message: "Request ended inside a message (\(bytes) bytes left)")
        }
    }

    /// A Trailers-Only response: HTTP status, content type and status in one HEADERS frame.
    public static func trailersOnly(_ error: RPCError) -> [HTTPHeaderField] {
        var fields = [
            HTTPHeaderField(name: ":status", value: "200"),
            HTTPHeaderField(name: "content-type", value: "application/grpc"),
            HTTPHeaderField(name: "grpc-status", value: String(error.code.rawValue)),
        ]
        if !error.message.isEmpty {
            fields.append(HTTPHeaderField(name: "grpc-message", value: GRPCMessageEncoding.encode(error.message)))
        }
        return fields + error.metadata.wireFields()
    }

    static func isGRPCContentType(_ value: String) -> Bool {
        // What every gRPC client sends, checked without splitting or trimming.
        if value == "application/grpc" || value == "application/grpc+proto" { return true }
        let base = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces() } ?? ""
        return base == "application/grpc" || base == "application/grpc+proto"
    }
}
