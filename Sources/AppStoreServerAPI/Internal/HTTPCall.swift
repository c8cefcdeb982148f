import RPCCore
import RPCRuntime

/// One request/answer exchange on an HTTP/2 stream. Loop-confined. Ends
/// exactly once, whatever comes first: the whole answer, a failure of the
/// stream or connection, the attempt's deadline, cancellation, or an
/// answer larger than allowed.
final class HTTPCall: HTTP2StreamDelegate {
    typealias Completion = CheckedContinuation<Result<AppStoreHTTPResponse, AppStoreServerAPIError>, Never>

    let request: AppStoreHTTPRequest
    private let bodyBytesMax: Int
    private let timeout: Duration
    private let loop: EventLoop
    private var continuation: Completion?
    private var result: Result<AppStoreHTTPResponse, AppStoreServerAPIError>?
    private var stream: HTTP2Stream?
    private var timer: EventLoop.TimerID?
    private var status: Int?
    private var headers: [HTTPHeaderField] = []
    private var body: [UInt8] = []
    /// Runs once when a call that held a stream ends (frees its slot).
    private var onRelease: (() -> Void)?
    private(set) var isFinished = false

    init(request: AppStoreHTTPRequest, bodyBytesMax: Int, timeout: Duration, loop: EventLoop) {
        self.request = request
        self.bodyBytesMax = bodyBytesMax
        self.timeout = timeout
        self.loop = loop
    }

    /// Installs the continuation and arms the deadline (queueing,
    /// connecting and the exchange all count against it).
    func begin(_ continuation: Completion) {
        self.continuation = continuation
        if isFinished { return complete() }
        let bound = LoopBound(self, loop: loop)
        let timeout = self.timeout
        timer = loop.schedule(after: timeout) {
            bound.value.fail(AppStoreServerAPIError(kind: .timeout, detail: "no complete answer within \(timeout)"))
        }
    }

    func attach(_ stream: HTTP2Stream, onRelease: @escaping () -> Void) {
        guard !isFinished else {
            stream.reset(errorCode: HTTP2Stream.ErrorCode.cancel)
            return onRelease()
        }
        self.stream = stream
        self.onRelease = onRelease
    }

    /// Ends the call locally; the stream, if any, is reset afterwards (the
    /// reset reports the stream's close, which must find the call finished
    /// and so cannot replace this error with "connection lost").
    func fail(_ error: AppStoreServerAPIError) {
        guard !isFinished else { return }
        result = .failure(error)
        let stream = self.stream
        finish()
        stream?.reset(errorCode: HTTP2Stream.ErrorCode.cancel)
    }

    func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
        guard !isFinished else { return }
        if status == nil {
            guard let text = headers.first(named: ":status"), let code = Int(text), (200...599).contains(code) else {
                return fail(AppStoreServerAPIError(kind: .invalidResponse, detail: "answer without a valid :status"))
            }
            status = code
            self.headers = headers
        }
        // A second block is trailers: nothing Apple sends that we need.
        if endStream { succeed() }
    }

    func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
        guard !isFinished else { return }
        guard body.count + bytes.count <= bodyBytesMax else {
            return fail(
                AppStoreServerAPIError(kind: .responseTooLarge, detail: "answer body larger than \(bodyBytesMax) bytes")
            )
        }
        body.append(contentsOf: bytes)
        if endStream { succeed() }
    }

    func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {
        self.stream = nil
        guard !isFinished else { return }
        let how =
            errorCode == HTTP2ErrorCodes.connectionClosed
            ? "the connection dropped" : "the server reset the stream (HTTP/2 error \(errorCode))"
        fail(AppStoreServerAPIError(kind: .connectionLost, detail: "\(how) before the whole answer arrived"))
    }

    private func succeed() {
        guard let status else {
            return fail(AppStoreServerAPIError(kind: .invalidResponse, detail: "stream ended without an answer"))
        }
        result = .success(AppStoreHTTPResponse(status: status, headers: headers, body: body))
        finish()
    }

    private func finish() {
        guard !isFinished else { return }
        isFinished = true
        if let timer { loop.cancel(timer) }
        timer = nil
        let release = onRelease
        onRelease = nil
        release?()
        complete()
    }

    private func complete() {
        guard let continuation, let result else { return }
        self.continuation = nil
        continuation.resume(returning: result)
    }
}
