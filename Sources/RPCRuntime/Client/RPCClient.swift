import Locking
import RPCCore

/// A gRPC client for unary calls. Keeps one multiplexed HTTP/2 connection per
/// target, spreads calls round-robin over targets (skipping ones in
/// backoff), and reconnects with bounded exponential backoff. All I/O runs on
/// one event loop thread: the client's own, or one lent by its owner (then a
/// call made by a task on that loop is sent at once, with no hand-off).
public final class RPCClient: UnaryCaller {
    /// Client settings.
    public struct Configuration: Sendable {
        public var limits: RPCLimits
        public var backoff: ConnectionBackoff
        public var connectTimeout: Duration
        /// When set, connections use TLS with ALPN "h2".
        public var tls: TLSConfiguration?
        /// Tests only: the first stream id of each new connection (odd), to
        /// reach the end of HTTP/2's id space without 2^30 calls.
        var firstStreamIDForTesting: Int32?

        public init(
            limits: RPCLimits = .default, backoff: ConnectionBackoff = .init(),
            connectTimeout: Duration = .seconds(5), tls: TLSConfiguration? = nil
        ) {
            self.limits = limits
            self.backoff = backoff
            self.connectTimeout = connectTimeout
            self.tls = tls
        }
    }

    public let targets: [HostAndPort]
    public let configuration: Configuration
    private let loop: EventLoop
    /// The loop was given (shared with its owner, who stops it), not made here.
    private let ownsLoop: Bool
    private let state: LoopBound<ClientState>
    private let closed = Mutex(false)

    /// Loop-confined: the targets and the round-robin cursor.
    private final class ClientState {
        var targets: [ClientTarget]
        var nextIndex = 0
        init(targets: [ClientTarget]) { self.targets = targets }
    }

    /// `loop`: run the connections on this loop (its owner stops it) instead
    /// of a loop of the client's own, e.g. the loop whose tasks make the calls.
    public init(targets: [HostAndPort], configuration: Configuration = .init(), loop sharedLoop: EventLoop? = nil)
        throws
    {
        precondition(!targets.isEmpty, "RPCClient needs at least one target")
        self.targets = targets
        self.configuration = configuration
        let loop = try sharedLoop ?? EventLoop(name: "rpc-client")
        self.loop = loop
        ownsLoop = sharedLoop == nil
        let tlsContext = try configuration.tls.map { try TLSContext(client: $0) }
        let clientTargets = targets.map {
            ClientTarget(address: $0, loop: loop, configuration: configuration, tlsContext: tlsContext)
        }
        // Only ever touched on `loop`; created here before the loop sees it.
        self.state = LoopBound(ClientState(targets: clientTargets), uncheckedOnCreation: loop)
    }

    deinit {
        // Without close() the loop thread would outlive the client.
        let state = self.state
        loop.execute { for target in state.value.targets { target.shutdown() } }
        if ownsLoop { loop.stopSoon() }
    }

    /// Calls `method` once with serialized messages (`unary`, from
    /// `UnaryCaller`, converts them). Throws `RPCError`: UNAVAILABLE when no
    /// connection could be made, DEADLINE_EXCEEDED after `timeout`, CANCELLED
    /// when the task is cancelled (before anything is sent when it already
    /// was at the call), RESOURCE_EXHAUSTED when the request is too
    /// large or the client's loop already has `EventLoop.submissionsQueuedMax`
    /// calls waiting, or the server's status.
    public func unaryRaw(
        _ method: MethodDescriptor, request: [UInt8], metadata: Metadata = [:], timeout: Duration? = nil
    ) async throws -> ClientResponse<[UInt8]> {
        guard request.count <= configuration.limits.messageSizeBytesMax else {
            throw RPCError(
                code: .resourceExhausted,
                message: "Request message larger than \(configuration.limits.messageSizeBytesMax) bytes")
        }
        if closed.withLock({ $0 }) { throw RPCError(code: .unavailable, message: "Client closed") }
        // A caller already cancelled sends nothing: from a task on the loop
        // the call would be sent at once and reset a moment later by the
        // cancellation handler, a stream the server opens (and may start a
        // handler for) for nothing.
        if Task.isCancelled { throw RPCError(code: .cancelled, message: "Call cancelled") }
        let loop = self.loop
        let state = self.state
        let limits = configuration.limits
        // The call object is created and used on the loop only.
        let callBox = Mutex<LoopBound<ClientCall>?>(nil)
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: ClientCall.Completion) in
                let start: @Sendable () -> Void = {
                    let existing = callBox.withLock { $0 }
                    let call =
                        existing?.value
                        ?? ClientCall(
                            path: method.path, metadata: metadata, body: MessageFramer.frame(request),
                            timeout: timeout, limits: limits, loop: loop)
                    if existing == nil { callBox.withLock { $0 = LoopBound(call, loop: loop) } }
                    call.begin(continuation)
                    guard !call.isFinished else { return }
                    Self.pickTarget(state.value).submit(call)
                }
                // A caller on the loop (a task that prefers it) sends at once,
                // ahead of the work already queued there.
                if loop.inEventLoop { return start() }
                do throws(EventLoopSubmissionError) {
                    try loop.submit(start)
                } catch .loopStopped {
                    continuation.resume(throwing: RPCError(code: .unavailable, message: "Client closed"))
                } catch {
                    // Nothing was sent: shed here, transient for the caller.
                    continuation.resume(
                        throwing: RPCError(code: .resourceExhausted, message: "Call not started: \(error)"))
                }
            }
        } onCancel: {
            loop.execute {
                let call: ClientCall
                if let existing = callBox.withLock({ $0 }) {
                    call = existing.value
                } else {
                    // Cancelled before the call reached the loop: create it finished.
                    call = ClientCall(
                        path: method.path, metadata: metadata, body: [], timeout: nil, limits: limits, loop: loop)
                    callBox.withLock { $0 = LoopBound(call, loop: loop) }
                }
                call.fail(RPCError(code: .cancelled, message: "Call cancelled"))
            }
        }
        return ClientResponse(
            message: response.message, metadata: response.metadata, trailingMetadata: response.trailingMetadata)
    }

    /// Round-robin, preferring targets not in backoff.
    private static func pickTarget(_ state: ClientState) -> ClientTarget {
        let count = state.targets.count
        let start = state.nextIndex
        state.nextIndex = (start + 1) % count
        for offset in 0..<count {
            let target = state.targets[(start + offset) % count]
            if target.isAvailable { return target }
        }
        return state.targets[start]
    }

    /// Closes all connections and stops the event loop. Calls still in
    /// flight fail with UNAVAILABLE.
    public func close() async {
        let wasClosed = closed.withLock { value in
            defer { value = true }
            return value
        }
        guard !wasClosed else { return }
        let state = self.state
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.execute {
                for target in state.value.targets { target.shutdown() }
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
        if ownsLoop { await loop.shutdown() }
    }
}
