/// The pure life cycle of one HTTP/1.1 connection: it owns the parser,
/// queues pipelined requests behind the one in flight, and decides timeouts
/// (slow-loris head deadline, body deadline, keep-alive idle), the request
/// cap per connection and closing after errors. The I/O layer supplies a
/// monotonic clock in milliseconds, arms one timer at `deadlineMilliseconds`
/// after every call, and pauses reading while `wantsRead` is false.
public struct HTTPConnectionStateMachine: Sendable {
    /// Items parsed but not yet handed to the I/O layer.
    private enum Queued: Sendable {
        case request(HTTPRequest)
        case failure(HTTPRequestError)
        /// A head the screen refused: its answer, then the connection closes.
        case refused(HTTPResponse)
    }

    private var parser: HTTPRequestParser
    private var queue: [Queued] = []
    private var inFlight = false
    /// The connection will close once the in-flight response is written.
    private var closeAfterInFlight = false
    private var peerHasClosed = false
    private var dispatchedCount = 0
    /// When the current partial head's first byte arrived.
    private var headStartedAtMilliseconds: Int64?
    /// When the current request's head completed (its body is pending).
    private var bodyStartedAtMilliseconds: Int64?
    /// When the connection last became idle (opened or answered).
    private var idleSinceMilliseconds: Int64
    /// A request whose head asked for 100 Continue is waiting behind an
    /// earlier one: the interim response goes out when it reaches the head
    /// of the line, unless its body arrives first (RFC 9110 10.1.1: a
    /// server that reads the body must send 100 or a final status).
    private var continueOwed = false

    public let requestsPerConnectionMax: Int

    /// An event that cannot happen in the current state (bytes while the
    /// machine does not want to read, an end of stream after the end, a
    /// response written with none in flight) is a bug in the I/O layer: it
    /// stops a debug build at once (`assertionFailure`), and in release
    /// closes the connection. Tests of the release behaviour turn the
    /// assertion off.
    public let assertsOnInvariantViolation: Bool

    /// True once the connection is closed (or told to close): ignore it.
    public private(set) var isClosed = false

    /// `screensHeadsWithBody`: `bytesReceived`'s `screen` sees each head
    /// that announces a body before any of the body is held.
    public init(
        nowMilliseconds: Int64, requestsPerConnectionMax: Int = HTTPServerLimits.requestsPerConnectionMax,
        bodyLimits: HTTPBodyLimits = HTTPBodyLimits(), screensHeadsWithBody: Bool = false,
        assertsOnInvariantViolation: Bool = true
    ) {
        precondition(requestsPerConnectionMax > 0)
        parser = HTTPRequestParser(bodyLimits: bodyLimits, reportsHeadsWithBody: screensHeadsWithBody)
        idleSinceMilliseconds = nowMilliseconds
        self.requestsPerConnectionMax = requestsPerConnectionMax
        self.assertsOnInvariantViolation = assertsOnInvariantViolation
    }

    /// The answer to an impossible event (see `assertsOnInvariantViolation`):
    /// the connection closes, whatever was queued or in flight is dropped,
    /// and every later event is answered with nothing.
    private mutating func invariantViolated(_ event: String) -> [HTTPConnectionAction] {
        if assertsOnInvariantViolation {
            assertionFailure("HTTPConnectionStateMachine: \(event) (closed: \(isClosed), in flight: \(inFlight))")
        }
        inFlight = false
        closeAfterInFlight = false
        queue = []
        if isClosed { return [] }
        isClosed = true
        return [.close]
    }

    /// Whether the I/O layer should read more bytes now.
    public var wantsRead: Bool {
        !isClosed && !closeAfterInFlight && !peerHasClosed && !parser.hasFailed
            && queue.count < HTTPServerLimits.pipelinedRequestCountMax
    }

    /// When `timerFired` must be called next; nil while a request is being
    /// handled (the handler has its own deadline) or after closing.
    public var deadlineMilliseconds: Int64? {
        if isClosed || inFlight || !queue.isEmpty { return nil }
        if let bodyStartedAtMilliseconds {
            return bodyStartedAtMilliseconds + HTTPServerLimits.requestBodyTimeoutMilliseconds
        }
        if let headStartedAtMilliseconds {
            return headStartedAtMilliseconds + HTTPServerLimits.requestHeadTimeoutMilliseconds
        }
        return idleSinceMilliseconds + HTTPServerLimits.keepAliveIdleTimeoutMilliseconds
    }

    /// Bytes arrived from the peer. Only while `wantsRead` or with the
    /// pipeline full (its overflow is answered): the I/O layer stops
    /// reading otherwise, so bytes then are a bug.
    ///
    /// `screen` (with `screensHeadsWithBody`) decides on each head that
    /// announces a body, as it completes: a response refuses the request
    /// unread. The parser then stops (what it buffered of the body, and any
    /// request after it, is dropped), the refusal is answered in its turn
    /// behind the requests before it, and the connection closes after it:
    /// the body still on its way is never read as a request.
    public mutating func bytesReceived(
        _ bytes: some Collection<UInt8>, nowMilliseconds: Int64,
        screen: (HTTPRequestHead) -> HTTPResponse? = { _ in nil }
    ) -> [HTTPConnectionAction] {
        guard !isClosed && !closeAfterInFlight && !peerHasClosed && !parser.hasFailed else {
            return invariantViolated("bytes received while not reading")
        }
        let completedBefore = parser.completedRequestCount
        let events = parser.feed(bytes)
        if parser.completedRequestCount != completedBefore {
            headStartedAtMilliseconds = nil
            bodyStartedAtMilliseconds = nil
        }
        updateTimers(nowMilliseconds: nowMilliseconds)
        var actions: [HTTPConnectionAction] = []
        screening: for event in events {
            switch event {
            case .bodyFollows(let head):
                guard let refusal = screen(head) else { continue }
                parser.abandon()
                headStartedAtMilliseconds = nil
                bodyStartedAtMilliseconds = nil
                continueOwed = false
                queue.append(.refused(refusal))
                break screening
            case .continueRequired:
                // Only when nothing is ahead of it: an interim response may
                // not overtake the answers to earlier pipelined requests.
                if !inFlight && queue.isEmpty { actions.append(.writeContinue) } else { continueOwed = true }
            case .request(let request):
                // Its body came whole: no interim response is owed any more.
                continueOwed = false
                queue.append(.request(request))
            case .failure(let error):
                queue.append(.failure(error))
            }
        }
        if queue.count > HTTPServerLimits.pipelinedRequestCountMax {
            queue.removeLast(queue.count - HTTPServerLimits.pipelinedRequestCountMax)
            queue.append(.failure(HTTPRequestError(.tooManyPipelinedRequests)))
        }
        actions += dispatchNextIfIdle(nowMilliseconds: nowMilliseconds)
        return actions
    }

    /// Request bytes the connection holds: the parser's, and the bodies of
    /// requests queued behind the one in flight (whose body its I/O layer
    /// holds and counts).
    public var heldByteCount: Int {
        queue.reduce(parser.heldByteCount) { held, item in
            if case .request(let request) = item { return held + request.body.count }
            return held
        }
    }

    /// The server may hold no more request bytes: what this connection
    /// holds beyond the request in flight is dropped, it reads no more, and
    /// it answers 503 (`bufferedBytesExhausted`) after the answer in
    /// flight, then closes.
    public mutating func bufferedBytesExhausted(nowMilliseconds: Int64) -> [HTTPConnectionAction] {
        guard !isClosed else { return [] }
        parser.abandon()
        headStartedAtMilliseconds = nil
        bodyStartedAtMilliseconds = nil
        queue = [.failure(HTTPRequestError(.bufferedBytesExhausted))]
        return dispatchNextIfIdle(nowMilliseconds: nowMilliseconds)
    }

    /// The response to the dispatched request has been written completely.
    public mutating func responseWritten(nowMilliseconds: Int64) -> [HTTPConnectionAction] {
        guard inFlight else { return invariantViolated("responseWritten without a request in flight") }
        inFlight = false
        if closeAfterInFlight {
            isClosed = true
            return [.close]
        }
        idleSinceMilliseconds = nowMilliseconds
        var actions = dispatchNextIfIdle(nowMilliseconds: nowMilliseconds)
        if continueOwed && !inFlight && queue.isEmpty && !isClosed && !parser.hasFailed {
            // The request that asked for it is now at the head of the line.
            continueOwed = false
            actions.append(.writeContinue)
        }
        return actions
    }

    /// The peer closed its side (read returned 0). TCP cannot tell a
    /// half-close from a client that went away, and a client that wants its
    /// answers keeps its side open (RFC 9112 section 9.6), so the end of
    /// input means gone, as in Go's net/http and nginx: the request in
    /// flight is cancelled (`cancelInFlight`; its answer is still written
    /// if the socket takes it), requests queued behind it and a partial
    /// one are dropped, and the connection closes. Idle, it closes at once.
    /// Delivered once only, and never after closing (the I/O layer stops
    /// reading then): anything else is an invariant violation.
    public mutating func peerClosed(nowMilliseconds: Int64) -> [HTTPConnectionAction] {
        guard !isClosed && !peerHasClosed else { return invariantViolated("peerClosed after the end") }
        peerHasClosed = true
        if inFlight {
            queue = []
            closeAfterInFlight = true
            return [.cancelInFlight]
        }
        return dispatchNextIfIdle(nowMilliseconds: nowMilliseconds)
    }

    /// The timer armed at `deadlineMilliseconds` fired (possibly late or
    /// early, or for another of the connection's deadlines: never a bug).
    public mutating func timerFired(nowMilliseconds: Int64) -> [HTTPConnectionAction] {
        guard let deadline = deadlineMilliseconds, nowMilliseconds >= deadline else { return [] }
        isClosed = true
        if headStartedAtMilliseconds != nil || bodyStartedAtMilliseconds != nil {
            return [.writeErrorAndClose(HTTPRequestError(.requestTimeout))]
        }
        return [.close]
    }

    private mutating func updateTimers(nowMilliseconds: Int64) {
        if parser.isReadingHead {
            bodyStartedAtMilliseconds = nil
            if parser.isIdle {
                headStartedAtMilliseconds = nil
            } else if headStartedAtMilliseconds == nil {
                headStartedAtMilliseconds = nowMilliseconds
            }
        } else if !parser.hasFailed && bodyStartedAtMilliseconds == nil {
            headStartedAtMilliseconds = nil
            bodyStartedAtMilliseconds = nowMilliseconds
        }
    }

    private mutating func dispatchNextIfIdle(nowMilliseconds: Int64) -> [HTTPConnectionAction] {
        if isClosed || inFlight { return [] }
        guard !queue.isEmpty else {
            if peerHasClosed {
                isClosed = true
                return [.close]
            }
            return []
        }
        switch queue.removeFirst() {
        case .failure(let error):
            isClosed = true
            queue = []
            return [.writeErrorAndClose(error)]
        case .refused(let response):
            isClosed = true
            queue = []
            return [.writeResponseAndClose(response)]
        case .request(let request):
            dispatchedCount += 1
            let keepAlive = request.keepAlive && dispatchedCount < requestsPerConnectionMax
            if !keepAlive {
                closeAfterInFlight = true
                queue = []
            }
            inFlight = true
            return [.dispatch(request, keepAlive: keepAlive)]
        }
    }
}
