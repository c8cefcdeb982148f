import RPCCore
import RPCRuntime

/// One HTTP/2 request stream: collects headers and a body (at most the
/// body limit of its path), hands the request to the responder on a Task,
/// and writes the response back on the loop. Loop-confined.
final class HTTP2RequestStream: HTTP2StreamDelegate {
    private let loop: EventLoop
    private let responder: any HTTPResponder
    private let bodyLimits: HTTPBodyLimits
    private weak var stream: HTTP2Stream?
    private var fields: [(name: String, value: String)] = []
    private var body: [UInt8] = []
    /// Headers arrived; a later HEADERS block is trailers (ignored).
    private var hasHeaders = false
    /// The request was handed on or refused: ignore further input.
    private var finished = false
    private var requestTimer: EventLoop.TimerID?
    /// The responder's Task until its answer is sent: cancelled when the
    /// stream is reset or the connection drops first.
    private var responseTask: Task<Void, Never>?
    /// The server's bound on request bytes held, and this stream's share
    /// (its header list and body, until the answer is sent or the stream
    /// closes).
    private let budget: RequestBytesBudget
    private var budgetedBytes = 0
    /// The header list's share: HPACK lets a few bytes on the wire stand
    /// for a whole field held here, so it is counted as decoded (name,
    /// value and 32 bytes per field, as SETTINGS_MAX_HEADER_LIST_SIZE counts).
    private var headerBytes = 0
    /// The share of a header block still arriving, counted as it is
    /// decoded (`streamIsReceivingHeaders`) until it is complete: each
    /// connection may have one in progress, up to 16 KiB.
    private var receivingBytes = 0
    /// The block arriving would have passed the server's bound: its fields
    /// were dropped, and it is answered 503 once complete.
    private var receivingPastBudget = false
    /// Answered from the head while the body it declared is still coming:
    /// what the client still sends is read and dropped (never held), so it
    /// ends its request as it meant to. nghttp2 resets a stream sending
    /// more than its `content-length` (PROTOCOL_ERROR); no end by the
    /// request deadline resets it here (NO_ERROR). Some clients (curl 7.88)
    /// take a reset during their upload as a failure and never show the answer.
    private var draining = false

    /// Starts the request deadline: headers and body must be complete
    /// within `requestTimeoutMilliseconds` (slow-loris over HTTP/2).
    init(
        stream: HTTP2Stream, loop: EventLoop, responder: any HTTPResponder, bodyLimits: HTTPBodyLimits,
        requestTimeoutMilliseconds: Int64, budget: RequestBytesBudget
    ) {
        self.stream = stream
        self.budget = budget
        self.loop = loop
        self.responder = responder
        self.bodyLimits = bodyLimits
        requestTimer = loop.schedule(after: .milliseconds(requestTimeoutMilliseconds)) { [weak self] in
            self?.requestTimedOut()
        }
    }

    private func requestTimedOut() {
        requestTimer = nil
        if draining {
            draining = false
            stream?.reset(errorCode: HTTP2Stream.ErrorCode.noError)
            return
        }
        guard !finished, let stream else { return }
        finished = true
        respondEarly(stream, HTTPRequestError(.requestTimeout))
    }

    /// Answers before the request is complete, with the same response
    /// (a problem, in the gateway) as HTTP/1.1 gives; the stream is reset
    /// once the answer is out, so the client stops sending.
    private func respondEarly(_ stream: HTTP2Stream, _ error: HTTPRequestError) {
        respondEarly(stream, responder.framingFailure(error, origin: origin(stream)))
    }

    private func respondEarly(_ stream: HTTP2Stream, _ response: HTTPResponse, thenReset: Bool = true) {
        let headers = Self.runtimeFields(HTTP2Messages.responseFields(response, date: HTTPServerClock.imfFixdate()))
        stream.respondEarly(headers, body: response.body, thenReset: thenReset)
    }

    private func origin(_ stream: HTTP2Stream?) -> RequestOrigin {
        RequestOrigin(protocolName: "HTTP/2", remotePeer: stream?.remotePeer ?? "")
    }

    private func finish() {
        finished = true
        if let requestTimer { loop.cancel(requestTimer) }
        requestTimer = nil
    }

    func streamIsReceivingHeaders(_ stream: HTTP2Stream, bytes: Int) -> Bool {
        let held = budgetedBytes - receivingBytes + bytes
        guard budget.resize(from: budgetedBytes, to: held) else {
            // The connection drops the block's fields from here on.
            receivingPastBudget = true
            return false
        }
        budgetedBytes = held
        receivingBytes = bytes
        return true
    }

    func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [RPCCore.HTTPHeaderField], endStream: Bool) {
        // The block is complete: its share while arriving ends (a request's
        // head is counted again below, as the list it is).
        _ = budget.resize(from: budgetedBytes, to: budgetedBytes - receivingBytes)
        budgetedBytes -= receivingBytes
        receivingBytes = 0
        let pastBudget = receivingPastBudget
        receivingPastBudget = false
        guard !finished else { return }
        if pastBudget && !hasHeaders {
            // The head's fields were not kept: answered as a whole list past the bound is.
            finish()
            releaseBudget()
            return respondEarly(stream, HTTPRequestError(.bufferedBytesExhausted))
        }
        if !hasHeaders {
            hasHeaders = true
            let listBytes = headers.reduce(0) {
                $0 + $1.name.utf8.count + $1.value.utf8.count + Self.fieldOverheadBytes
            }
            guard budget.resize(from: budgetedBytes, to: budgetedBytes + listBytes) else {
                finish()
                return respondEarly(stream, HTTPRequestError(.bufferedBytesExhausted))
            }
            budgetedBytes += listBytes
            headerBytes = listBytes
            fields = headers.map { (name: $0.name, value: $0.value) }
            // A malformed head is not screened: the request answers for it
            // (400/414/501) once complete, as before.
            if !endStream, case .success(let head) = HTTP2Messages.head(fields: fields),
                let refusal = responder.refuseBeforeBody(head, origin: origin(stream))
            {
                // Answered before a byte of the body is held. A body it
                // declared within its path's limit is let in and dropped
                // (the deadline still runs); any other is stopped by the
                // reset after the answer.
                releaseBudget()
                fields = []
                if let declared = head.headers.first("content-length").flatMap({
                    try? HTTPMessageFraming.parseContentLength($0[...])
                }),
                    declared <= bodyLimits.bytesMax(target: head.target)
                {
                    finished = true
                    draining = true
                    return respondEarly(stream, refusal, thenReset: false)
                }
                finish()
                return respondEarly(stream, refusal)
            }
        }
        if endStream { dispatch() }
    }

    /// What RFC 9113 6.5.2 adds to each field's name and value.
    private static let fieldOverheadBytes = 32

    func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
        if draining {
            // The connection counts these bytes for this stream until it
            // closes; drop its count now, nothing holds them.
            return stream.releaseBufferedBytes()
        }
        guard !finished else { return }
        let path = fields.first(where: { $0.name == ":path" })?.value ?? ""
        guard body.count + bytes.count <= bodyLimits.bytesMax(target: path) else {
            // Answer now and reset once the answer is out (RFC 9113 §8.1),
            // so the client stops sending.
            finish()
            return respondEarly(stream, HTTPRequestError(.bodyTooLarge))
        }
        guard budget.resize(from: budgetedBytes, to: headerBytes + body.count + bytes.count) else {
            finish()
            releaseBudget()
            fields = []
            body = []
            return respondEarly(stream, HTTPRequestError(.bufferedBytesExhausted))
        }
        budgetedBytes = headerBytes + body.count + bytes.count
        body.append(contentsOf: bytes)
        if endStream { dispatch() }
    }

    private func releaseBudget() {
        _ = budget.resize(from: budgetedBytes, to: 0)
        budgetedBytes = 0
        headerBytes = 0
        receivingBytes = 0
    }

    func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {
        finish()
        releaseBudget()
        // Closed before our answer (RST_STREAM or a dropped connection).
        responseTask?.cancel()
        responseTask = nil
    }

    private func dispatch() {
        finish()
        let request: HTTPRequest
        switch HTTP2Messages.request(fields: fields, body: body, bodyLimits: bodyLimits) {
        case .success(let built): request = built
        case .failure(let error):
            return send(responder.framingFailure(error, origin: origin(stream)), isHead: false)
        }
        fields = []
        body = []
        let bound = LoopBound(self, loop: loop)
        let loop = self.loop
        let responder = self.responder
        let requestOrigin = origin(stream)
        let isHead = request.method == "HEAD"
        responseTask = Task(executorPreference: loop) {
            let response = await responder.respond(to: request, origin: requestOrigin)
            if loop.inEventLoop {
                bound.value.send(response, isHead: isHead)
            } else {
                // Dropped when the loop already stopped (shutdown).
                loop.execute { bound.value.send(response, isHead: isHead) }
            }
        }
    }

    private func send(_ response: HTTPResponse, isHead: Bool) {
        responseTask = nil
        releaseBudget()
        guard let stream, !stream.isClosed else { return }
        let date = HTTPServerClock.imfFixdate()
        let headers = Self.runtimeFields(HTTP2Messages.responseFields(response, date: date))
        if isHead || response.body.isEmpty {
            stream.sendHeaders(headers, endStream: true)
        } else {
            stream.sendHeaders(headers, endStream: false)
            stream.sendData(response.body, endStream: true)
        }
    }

    private static func runtimeFields(_ fields: [(name: String, value: String)]) -> [RPCCore.HTTPHeaderField] {
        fields.map { RPCCore.HTTPHeaderField(name: $0.name, value: $0.value) }
    }
}
