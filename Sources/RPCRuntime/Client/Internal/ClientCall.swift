import RPCCore

/// One unary call in flight on the client. Loop-confined. Resumes its
/// continuation exactly once, whatever comes first: the response, a
/// connection failure, the deadline or cancellation.
final class ClientCall: HTTP2StreamDelegate {
    typealias Completion = CheckedContinuation<ClientResponseStateMachine.Response, any Error>

    let path: String
    let metadata: Metadata
    let body: [UInt8]
    let timeout: Duration?
    private var machine: ClientResponseStateMachine
    private var continuation: Completion?
    private var stream: HTTP2Stream?
    private var timer: EventLoop.TimerID?
    private let loop: EventLoop
    private(set) var isFinished = false
    /// The call's connection took no new streams before any of it was sent,
    /// and it was handed to a fresh connection (at most once).
    var movedToFreshConnection = false
    /// The target whose connection carries the call: a call the server
    /// refused unprocessed (RST_STREAM REFUSED_STREAM before any response,
    /// e.g. a stream above a GOAWAY's last id) is submitted to it again,
    /// once. Weak: the target outlives its calls, and a closed client's
    /// refused call fails UNAVAILABLE.
    weak var target: ClientTarget?
    private var resubmittedAfterRefusal = false
    /// When the caller's timeout runs out: the `grpc-timeout` sent is what
    /// is left of it when the stream opens (after a connect or a refusal),
    /// so the server never works past the moment the caller gave up.
    private let deadline: ContinuousClock.Instant?

    init(path: String, metadata: Metadata, body: [UInt8], timeout: Duration?, limits: RPCLimits, loop: EventLoop) {
        self.path = path
        self.metadata = metadata
        self.body = body
        self.timeout = timeout
        self.machine = ClientResponseStateMachine(messageSizeBytesMax: limits.messageSizeBytesMax)
        self.loop = loop
        deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
    }

    /// Installs the continuation and arms the deadline timer. Returns false if
    /// the call already finished (cancelled before it started).
    func begin(_ continuation: Completion) {
        self.continuation = continuation
        if isFinished {
            complete()
            return
        }
        if let timeout {
            let bound = LoopBound(self, loop: loop)
            timer = loop.schedule(after: timeout) {
                let call = bound.value
                call.fail(RPCError(code: .deadlineExceeded, message: "Deadline exceeded after \(timeout)"))
            }
        }
    }

    /// Headers for this call on `authority`.
    func requestHeaders(authority: String, scheme: String) -> [HTTPHeaderField] {
        var headers = [
            HTTPHeaderField(name: ":method", value: "POST"),
            HTTPHeaderField(name: ":scheme", value: scheme),
            HTTPHeaderField(name: ":path", value: path),
            HTTPHeaderField(name: ":authority", value: authority),
            HTTPHeaderField(name: "content-type", value: "application/grpc"),
            HTTPHeaderField(name: "te", value: "trailers"),
            HTTPHeaderField(name: "user-agent", value: "iap-rpcruntime/1"),
        ]
        if let deadline {
            let left = max(.milliseconds(1), deadline - ContinuousClock.now)
            headers.append(HTTPHeaderField(name: "grpc-timeout", value: GRPCTimeout.encode(left)))
        }
        return headers + metadata.wireFields()
    }

    func attach(_ stream: HTTP2Stream) {
        if isFinished {
            stream.reset(errorCode: HTTP2Stream.ErrorCode.cancel)
        } else {
            self.stream = stream
        }
    }

    /// Ends the call locally (deadline, cancellation, connect failure).
    func fail(_ error: RPCError) {
        guard !isFinished else { return }
        machine.fail(error)
        stream?.reset(errorCode: HTTP2Stream.ErrorCode.cancel)
        finish()
    }

    func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
        machine.receiveHeaders(headers, endStream: endStream)
        if machine.result != nil { finish() }
    }

    func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
        machine.receiveData(bytes, endStream: endStream)
        if machine.result != nil {
            // A protocol violation decided the outcome early: stop the stream.
            if !endStream, case .failure = machine.result { stream.reset(errorCode: HTTP2Stream.ErrorCode.cancel) }
            finish()
        }
    }

    func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {
        self.stream = nil
        // REFUSED_STREAM: the server processed none of it (RFC 9113 8.7), so
        // sending it again cannot run it twice, as a stock gRPC client's
        // transparent retry does.
        if errorCode == HTTP2Stream.ErrorCode.refusedStream, machine.awaitsResponseHeaders, !isFinished,
            !resubmittedAfterRefusal, let target
        {
            resubmittedAfterRefusal = true
            return target.submit(self)
        }
        machine.streamClosed(errorCode: errorCode)
        finish()
    }

    private func finish() {
        guard !isFinished else { return }
        isFinished = true
        if let timer { loop.cancel(timer) }
        timer = nil
        complete()
    }

    private func complete() {
        guard let continuation, let result = machine.result else { return }
        self.continuation = nil
        switch result {
        case .success(let response): continuation.resume(returning: response)
        case .failure(let error): continuation.resume(throwing: error)
        }
    }
}
