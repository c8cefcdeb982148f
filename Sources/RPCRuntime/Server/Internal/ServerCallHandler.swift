/// Runs one gRPC call on an HTTP/2 stream: feeds stream events to the pure
/// `ServerStreamStateMachine` and performs its actions. Loop-confined; the
/// user's handler runs as a Task on the cooperative pool (created there,
/// together with the other calls of the same read), or on the loop itself
/// with `handlersOnLoop`, and posts its result back to the loop through the
/// connection's mailbox.
import RPCCore

final class ServerCallHandler: HTTP2StreamDelegate {
    private var machine: ServerStreamStateMachine
    private let router: Router
    private let loop: EventLoop
    private let mailbox: ConnectionMailbox?
    /// Strong, not weak (a weak reference would slow every retain of the
    /// stream); the link is dropped when the stream closes, so no cycle
    /// with `stream.delegate` outlives it.
    private var stream: HTTP2Stream?
    private var task: HandlerTask?
    /// The handler found while the headers were checked, kept so the
    /// request needs no second lookup by a rebuilt path.
    private var handler: Router.RawHandler?
    private var deadlineTimer: EventLoop.TimerID?
    private let handlersOnLoop: Bool

    init(stream: HTTP2Stream, router: Router, limits: RPCLimits, loop: EventLoop, handlersOnLoop: Bool = false) {
        self.machine = ServerStreamStateMachine(limits: limits)
        self.router = router
        self.loop = loop
        self.handlersOnLoop = handlersOnLoop
        self.mailbox = stream.connection?.mailbox
        self.stream = stream
    }

    func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
        let router = self.router
        var found: Router.RawHandler?
        let action = machine.receiveHeaders(
            headers, endStream: endStream, now: .now,
            isKnownPath: { path in
                found = router.handler(forPath: path)
                return found != nil
            })
        switch action {
        case .none:
            break
        case .accept(let head):
            handler = found
            if let deadline = head.deadline {
                let bound = LoopBound(self, loop: loop)
                deadlineTimer = loop.schedule(at: deadline) { bound.value.deadlineExpired() }
            }
        case .respond(let fields):
            respondEarly(stream, fields, requestComplete: endStream)
        }
    }

    /// Answers before the request is complete; then, as RFC 9113 §8.1
    /// allows, asks the client with RST_STREAM(NO_ERROR) to stop sending.
    private func respondEarly(_ stream: HTTP2Stream, _ fields: [HTTPHeaderField], requestComplete: Bool) {
        if requestComplete {
            stream.sendHeaders(fields, endStream: true)
        } else {
            stream.respondEarly(fields)
        }
    }

    func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
        perform(machine.receiveData(bytes, endStream: endStream), on: stream, requestComplete: endStream)
    }

    func streamDidExceedBufferedBytesLimit(_ stream: HTTP2Stream) {
        perform(machine.bufferedBytesLimitExceeded(), on: stream, requestComplete: false)
    }

    private func perform(
        _ action: ServerStreamStateMachine.OnReceiveData, on stream: HTTP2Stream, requestComplete: Bool
    ) {
        switch action {
        case .none:
            break
        case .respond(let fields):
            cancelDeadlineTimer()
            respondEarly(stream, fields, requestComplete: requestComplete)
        case .runHandler(let head, let message):
            runHandler(
                head: head, message: message, remotePeer: stream.remotePeer,
                peerIdentity: stream.connection?.peerIdentity)
        }
        // The request bytes went to the handler or were dropped: the
        // connection may count them no more.
        if !machine.isReceivingRequest { stream.releaseBufferedBytes() }
    }

    func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {
        self.stream = nil
        cancelDeadlineTimer()
        if machine.streamClosed() == .cancelHandler { task?.cancel() }
        task = nil
    }

    private func runHandler(
        head: ServerStreamStateMachine.RequestHead, message: [UInt8], remotePeer: String, peerIdentity: PeerIdentity?
    ) {
        guard let handler = handler ?? router.handler(forPath: head.method.path) else { return }
        self.handler = nil
        let request = ServerRequest(
            message: message, metadata: head.metadata,
            context: ServerContext(
                method: head.method, deadline: head.deadline, remotePeer: remotePeer, peerIdentity: peerIdentity))
        let bound = LoopBound(self, loop: loop)
        let loop = self.loop
        let mailbox = self.mailbox
        let task = HandlerTask()
        self.task = task
        let operation: @Sendable () async -> Void = {
            let result: Result<ServerResponse<[UInt8]>, RPCError>
            do {
                result = .success(try await handler(request))
            } catch {
                result = .failure(RPCError.from(error))
            }
            // Through the connection's mailbox: results finishing together
            // share one loop wake-up and one socket write.
            if let mailbox {
                mailbox.post { bound.value.handlerFinished(result) }
            } else {
                loop.execute { bound.value.handlerFinished(result) }
            }
        }
        if handlersOnLoop {
            task.start(operation, executor: loop)
        } else if let connection = stream?.connection {
            connection.startOffLoop { task.start(operation) }
        } else {
            task.start(operation)
        }
    }

    private func handlerFinished(_ result: Result<ServerResponse<[UInt8]>, RPCError>) {
        task = nil
        cancelDeadlineTimer()
        guard let stream else { return }
        switch machine.handlerFinished(result) {
        case .none:
            break
        case .respond(let fields):
            stream.sendHeaders(fields, endStream: true)
        case .send(let headers, let data, let trailers):
            stream.sendHeaders(headers, endStream: false)
            stream.sendData(data, endStream: false)
            stream.sendTrailers(trailers)
        }
    }

    private func deadlineExpired() {
        deadlineTimer = nil
        let requestComplete = !machine.isReceivingRequest
        switch machine.deadlineExpired() {
        case .none:
            break
        case .cancelAndRespond(let fields):
            task?.cancel()
            task = nil
            guard let stream else { return }
            // Mid-upload, RST_STREAM(NO_ERROR) follows the answer, so the
            // client stops sending and the stream gives back its place.
            respondEarly(stream, fields, requestComplete: requestComplete)
            stream.releaseBufferedBytes()
        }
    }

    private func cancelDeadlineTimer() {
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        deadlineTimer = nil
    }
}
