import RPCRuntime

/// One accepted HTTP/1.1 connection on the shared port: on plaintext sniffs
/// the HTTP/2 preface (handing h2c connections over), otherwise drives the pure
/// `HTTPConnectionStateMachine` over a non-blocking socket. The only place
/// with side effects for HTTP/1.1: it performs the machine's actions,
/// arms its one timer, and keeps epoll interest to what it can use (no
/// reading while the machine wants none, so pipelining is bounded).
/// Loop-confined.
final class HTTP1Connection {
    private enum Phase {
        /// Reading the first bytes to tell HTTP/1.1 from h2c.
        case sniffing
        case http1
        /// Our side is shut down; discarding input until the peer closes.
        case lingering
        case finished
    }

    /// What to do once all queued output is written.
    private enum AfterOutput {
        case nothing
        case responseWritten
        case closeGracefully
    }

    /// The request being answered.
    private struct InFlight {
        let version: HTTPVersion
        let isHead: Bool
        let keepAlive: Bool
    }

    /// While the peer has hung up, the socket cannot be watched (epoll
    /// would report the hang-up for ever), so pending output is retried
    /// on this period instead; bounded by the write timeout.
    private static let writeRetryMilliseconds: Int64 = 20

    let socket: ConnectedSocket
    private let loop: EventLoop
    private let responder: any HTTPResponder
    private let readBuffer: SharedReadBuffer
    private var machine: HTTPConnectionStateMachine
    private var phase: Phase
    private var sniffed: [UInt8] = []
    private var firstByteAtMilliseconds: Int64?
    private var output: [UInt8] = []
    private var outputIndex = 0
    private var outputStalledSinceMilliseconds: Int64?
    private var afterOutput = AfterOutput.nothing
    private var inFlight: InFlight?
    /// The responder's Task for `inFlight`: cancelled when the client goes
    /// away or the connection closes before the answer.
    private var inFlightTask: Task<Void, Never>?
    private var interest: EventLoop.IOEvents?
    private var timer: (id: EventLoop.TimerID, deadline: Int64)?
    /// The peer hung up (or shut down its side): no more readiness events.
    private var peerFinished = false
    private var endOfStreamRead = false
    private var draining = false
    private var lingerDeadlineMilliseconds: Int64 = 0
    private var lingerDiscardedBytes = 0
    /// The server's bound on request bytes held, and this connection's share.
    private let budget: RequestBytesBudget
    private var budgetedBytes = 0
    /// The body of the request in flight, held by the responder's task.
    private var inFlightBodyBytes = 0
    /// Output that made no progress this long closes the connection.
    private let responseWriteTimeoutMilliseconds: Int64

    /// Called once when the connection closed (not after a hand-over).
    var onClose: (() -> Void)?
    /// Called when the connection turned out to be h2c: the socket and the
    /// bytes read so far. The connection is finished afterwards.
    var onHandOver: ((ConnectedSocket, [UInt8]) -> Void)?

    /// `sniffsHTTP2Preface`: false on TLS, where ALPN already chose HTTP/1.1
    /// (or nothing): HTTP/2 inside TLS needs ALPN "h2" (RFC 9113 3.3), so a
    /// preface there is an HTTP/1.1 request like any other (and refused).
    init(
        socket: ConnectedSocket, loop: EventLoop, responder: any HTTPResponder, readBuffer: SharedReadBuffer,
        bodyLimits: HTTPBodyLimits, budget: RequestBytesBudget, sniffsHTTP2Preface: Bool = true,
        responseWriteTimeoutMilliseconds: Int64 = HTTPServerLimits.responseWriteTimeoutMilliseconds
    ) {
        loop.assertInEventLoop()
        phase = sniffsHTTP2Preface ? .sniffing : .http1
        self.responseWriteTimeoutMilliseconds = responseWriteTimeoutMilliseconds
        self.socket = socket
        self.loop = loop
        self.responder = responder
        self.readBuffer = readBuffer
        self.budget = budget
        machine = HTTPConnectionStateMachine(
            nowMilliseconds: HTTPServerClock.monotonicMilliseconds(), bodyLimits: bodyLimits, screensHeadsWithBody: true
        )
    }

    func start() { settle() }

    /// The server is shutting down: finish the request in flight (its
    /// response says Connection: close), then close; close idle ones now.
    func drain() {
        draining = true
        switch phase {
        case .sniffing: closeNow()
        case .http1:
            if inFlight == nil && afterOutput == .nothing && outputIndex == output.count { beginLinger() }
            settle()
        case .lingering, .finished: break
        }
    }

    /// Closes at once (the shutdown grace period is over).
    func forceClose() { closeNow() }

    // MARK: Events

    private func handle(_ events: EventLoop.IOEvents) {
        guard phase != .finished else { return }
        if !events.isDisjoint(with: .hangup) { peerFinished = true }
        // TLS may stall a read until the socket is writable (see updateInterest).
        let readRetry = events.contains(.writable) && socket.tlsNeedsWritable
        if events.contains(.writable) { flush() }
        if events.contains(.readable) || peerFinished || readRetry { readAvailable() }
        settle()
    }

    private func timerFired() {
        timer = nil
        guard phase != .finished else { return }
        let now = HTTPServerClock.monotonicMilliseconds()
        if let stalled = outputStalledSinceMilliseconds, now - stalled >= responseWriteTimeoutMilliseconds {
            return closeNow()
        }
        switch phase {
        case .lingering:
            if now >= lingerDeadlineMilliseconds { return closeNow() }
        case .sniffing:
            if let deadline = sniffingDeadline(), now >= deadline { return closeNow() }
        case .http1:
            run(machine.timerFired(nowMilliseconds: now))
        case .finished:
            return
        }
        settle()
    }

    /// A response from the responder's Task, delivered on the loop.
    func responseReady(_ response: HTTPResponse) {
        guard phase == .http1, let current = inFlight else { return }
        inFlight = nil
        inFlightTask = nil
        inFlightBodyBytes = 0
        accountHeldBytes()
        let keepAlive = current.keepAlive && !draining
        let date = HTTPServerClock.imfFixdate()
        enqueue(
            HTTPResponseSerializer.serialize(
                response, requestVersion: current.version, keepAlive: keepAlive, omitBody: current.isHead, date: date),
            then: keepAlive ? .responseWritten : .closeGracefully)
        settle()
    }

    // MARK: Reading

    private var wantsRead: Bool {
        switch phase {
        case .sniffing, .lingering: return true
        case .http1: return machine.wantsRead
        case .finished: return false
        }
    }

    /// Reads while the state wants input; returns whether anything
    /// (bytes, end of stream or an error) was read.
    @discardableResult
    private func readAvailable() -> Bool {
        var progressed = false
        for _ in 0..<HTTPServerLimits.readsPerEventMax {
            guard wantsRead, !endOfStreamRead else { return progressed }
            let outcome = readBuffer.read(from: socket) { bytes in received(bytes) }
            switch outcome {
            case .bytes:
                progressed = true
                if socket.lastReadDrainedSocket { return true }
            case .wouldBlock:
                return progressed
            case .endOfStream:
                endOfStreamRead = true
                peerFinished = true
                peerClosed()
                return true
            case .failed:
                closeNow()
                return true
            }
        }
        return progressed
    }

    private func received(_ bytes: ArraySlice<UInt8>) {
        let now = HTTPServerClock.monotonicMilliseconds()
        switch phase {
        case .sniffing:
            if firstByteAtMilliseconds == nil { firstByteAtMilliseconds = now }
            sniffed.append(contentsOf: bytes)
            switch ConnectionPreface.classify(sniffed) {
            case .undecided: return
            case .http2: return handOver()
            case .http1:
                phase = .http1
                let first = sniffed
                sniffed = []
                run(machine.bytesReceived(first, nowMilliseconds: now, screen: screenHead))
                accountHeldBytes()
            }
        case .http1:
            run(machine.bytesReceived(bytes, nowMilliseconds: now, screen: screenHead))
            accountHeldBytes()
        case .lingering:
            lingerDiscardedBytes += bytes.count
            if lingerDiscardedBytes > HTTPServerLimits.closeLingerDiscardBytesMax { closeNow() }
        case .finished:
            return
        }
    }

    /// The responder's say on a head whose body has not been read.
    private func screenHead(_ head: HTTPRequestHead) -> HTTPResponse? {
        responder.refuseBeforeBody(head, origin: RequestOrigin(protocolName: "HTTP/1.1", remotePeer: socket.remotePeer))
    }

    private func peerClosed() {
        switch phase {
        case .sniffing, .lingering: closeNow()
        case .http1: run(machine.peerClosed(nowMilliseconds: HTTPServerClock.monotonicMilliseconds()))
        case .finished: return
        }
    }

    // MARK: The machine's actions (the only side effects of HTTP/1.1)

    private func run(_ actions: [HTTPConnectionAction]) {
        for action in actions {
            guard phase == .http1 else { return }
            switch action {
            case .writeContinue:
                enqueue(HTTPResponseSerializer.continueResponseBytes, then: .nothing)
            case .dispatch(let request, let keepAlive):
                dispatch(request, keepAlive: keepAlive)
            case .writeErrorAndClose(let error):
                let origin = RequestOrigin(protocolName: "HTTP/1.1", remotePeer: socket.remotePeer)
                writeAndClose(responder.framingFailure(error, origin: origin))
            case .writeResponseAndClose(let response):
                writeAndClose(response)
            case .cancelInFlight:
                inFlightTask?.cancel()
            case .close:
                if outputIndex == output.count { beginLinger() } else { afterOutput = .closeGracefully }
            }
        }
    }

    /// A response the connection answers itself (Connection: close), then
    /// a graceful close (the linger discards what the client still sends).
    private func writeAndClose(_ response: HTTPResponse) {
        let date = HTTPServerClock.imfFixdate()
        enqueue(
            HTTPResponseSerializer.serialize(response, requestVersion: .http1_1, keepAlive: false, date: date),
            then: .closeGracefully)
    }

    private func dispatch(_ request: HTTPRequest, keepAlive: Bool) {
        inFlight = InFlight(version: request.version, isHead: request.method == "HEAD", keepAlive: keepAlive)
        // Its body leaves the machine's count for ours until the answer.
        inFlightBodyBytes = request.body.count
        let bound = LoopBound(self, loop: loop)
        let loop = self.loop
        let responder = self.responder
        let origin = RequestOrigin(protocolName: request.version.text, remotePeer: socket.remotePeer)
        // On the loop (see HTTPServer); the answer is written at once when
        // the task ends there, handed back when it ended elsewhere.
        inFlightTask = Task(executorPreference: loop) {
            let response = await responder.respond(to: request, origin: origin)
            if loop.inEventLoop {
                bound.value.responseReady(response)
            } else {
                // Dropped when the loop already stopped (shutdown).
                loop.execute { bound.value.responseReady(response) }
            }
        }
    }

    /// Brings this connection's share of the server's request-bytes budget
    /// to what it holds now; when the server may hold no more, the machine
    /// drops what it buffered and answers 503 (after the answer in flight).
    private func accountHeldBytes() {
        guard phase == .http1 else { return }
        let held = machine.heldByteCount + inFlightBodyBytes
        if budget.resize(from: budgetedBytes, to: held) {
            budgetedBytes = held
            return
        }
        run(machine.bufferedBytesExhausted(nowMilliseconds: HTTPServerClock.monotonicMilliseconds()))
        let kept = machine.heldByteCount + inFlightBodyBytes
        // What is left is at most what was counted before (the request in flight).
        if budget.resize(from: budgetedBytes, to: kept) { budgetedBytes = kept }
    }

    // MARK: Writing

    private func enqueue(_ bytes: [UInt8], then after: AfterOutput) {
        if outputIndex == output.count {
            output = bytes
            outputIndex = 0
        } else {
            output.append(contentsOf: bytes)
        }
        if after != .nothing { afterOutput = after }
    }

    /// Writes queued output; when it is all out, performs what was to
    /// follow (which may queue more).
    private func flush() {
        while phase == .http1 || phase == .sniffing {
            while outputIndex < output.count {
                let outcome = output.withUnsafeBytes {
                    socket.write(UnsafeRawBufferPointer(rebasing: $0[outputIndex...]))
                }
                switch outcome {
                case .wrote(let count):
                    outputIndex += count
                    outputStalledSinceMilliseconds = nil
                case .wouldBlock:
                    if outputStalledSinceMilliseconds == nil {
                        outputStalledSinceMilliseconds = HTTPServerClock.monotonicMilliseconds()
                    }
                    return
                case .failed:
                    return closeNow()
                }
            }
            output = []
            outputIndex = 0
            let after = afterOutput
            afterOutput = .nothing
            switch after {
            case .nothing:
                return
            case .responseWritten:
                run(machine.responseWritten(nowMilliseconds: HTTPServerClock.monotonicMilliseconds()))
            case .closeGracefully:
                return beginLinger()
            }
        }
    }

    // MARK: Closing

    /// Shuts down our side and drains the peer's input for a short while,
    /// so unread input cannot turn our close into a reset that destroys
    /// the last response.
    private func beginLinger() {
        guard phase == .http1 || phase == .sniffing else { return }
        phase = .lingering
        socket.shutdownWrite()
        if endOfStreamRead { return closeNow() }
        lingerDeadlineMilliseconds = HTTPServerClock.monotonicMilliseconds() + HTTPServerLimits.closeLingerMilliseconds
    }

    private func closeNow() {
        guard phase != .finished else { return }
        phase = .finished
        _ = budget.resize(from: budgetedBytes, to: 0)
        budgetedBytes = 0
        // Nobody can read the answer any more: stop the work behind it.
        inFlightTask?.cancel()
        inFlightTask = nil
        releaseLoopResources()
        socket.close()
        let onClose = self.onClose
        self.onClose = nil
        onHandOver = nil
        onClose?()
    }

    private func handOver() {
        phase = .finished
        _ = budget.resize(from: budgetedBytes, to: 0)
        budgetedBytes = 0
        releaseLoopResources()
        let bytes = sniffed
        sniffed = []
        let onHandOver = self.onHandOver
        self.onHandOver = nil
        onClose = nil
        onHandOver?(socket, bytes)
    }

    private func releaseLoopResources() {
        if interest != nil {
            loop.unregister(fd: socket.descriptor)
            interest = nil
        }
        if let timer { loop.cancel(timer.id) }
        timer = nil
    }

    // MARK: Interest and timer

    /// After every event: writes what it can, reads what a finished peer
    /// left in the kernel, then fits epoll interest and the timer to the
    /// new state.
    private func settle() {
        guard phase != .finished else { return }
        flush()
        // A finished peer's input is all in the kernel already, and input
        // TLS decrypted ahead is in OpenSSL: no readiness event announces
        // either, so read it directly whenever the machine wants more
        // (bounded by that input).
        while phase != .finished && (peerFinished || socket.hasBufferedInput) && !endOfStreamRead && wantsRead {
            let progressed = readAvailable()
            flush()
            if !progressed { break }
        }
        guard phase != .finished else { return }
        updateInterest()
        armTimer()
    }

    private var hasPendingOutput: Bool { outputIndex < output.count }

    private func updateInterest() {
        var desired: EventLoop.IOEvents = []
        if !peerFinished {
            if wantsRead { desired.insert(.readable) }
            if hasPendingOutput || (wantsRead && socket.tlsNeedsWritable) { desired.insert(.writable) }
        }
        if desired == interest { return }
        do {
            if desired.isEmpty {
                if interest != nil { loop.unregister(fd: socket.descriptor) }
                interest = nil
            } else if interest == nil {
                try loop.register(fd: socket.descriptor, events: desired) { [weak self] events in self?.handle(events) }
                interest = desired
            } else {
                try loop.modify(fd: socket.descriptor, events: desired)
                interest = desired
            }
        } catch {
            closeNow()
        }
    }

    private func sniffingDeadline() -> Int64? {
        if let firstByteAtMilliseconds {
            return firstByteAtMilliseconds + HTTPServerLimits.requestHeadTimeoutMilliseconds
        }
        return machine.deadlineMilliseconds
    }

    private func currentDeadline(now: Int64) -> Int64? {
        // The earliest of the phase's deadline and the output's, without a
        // list (this runs after every event).
        var earliest: Int64?
        func consider(_ deadline: Int64?) {
            guard let deadline else { return }
            earliest = min(earliest ?? deadline, deadline)
        }
        switch phase {
        case .sniffing: consider(sniffingDeadline())
        case .http1: consider(machine.deadlineMilliseconds)
        case .lingering: consider(lingerDeadlineMilliseconds)
        case .finished: return nil
        }
        if hasPendingOutput {
            let stalled = outputStalledSinceMilliseconds ?? now
            consider(stalled + responseWriteTimeoutMilliseconds)
            if peerFinished { consider(now + Self.writeRetryMilliseconds) }
        }
        return earliest
    }

    /// Fits the timer to the earliest deadline. An armed timer that fires
    /// no later than that (or with no deadline at all) is kept: every firing
    /// re-checks each deadline against the clock and re-arms for the next,
    /// so an early one costs one wake-up, while moving the timer on every
    /// request (the idle deadline moves with each response) would cost a
    /// cancel and a schedule on the loop's heap per request.
    private func armTimer() {
        let now = HTTPServerClock.monotonicMilliseconds()
        let deadline = currentDeadline(now: now)
        if let timer, deadline.map({ timer.deadline <= $0 }) ?? true { return }
        if let timer { loop.cancel(timer.id) }
        timer = nil
        guard let deadline else { return }
        let id = loop.schedule(after: .milliseconds(max(0, deadline - now))) { [weak self] in self?.timerFired() }
        timer = (id, deadline)
    }
}
