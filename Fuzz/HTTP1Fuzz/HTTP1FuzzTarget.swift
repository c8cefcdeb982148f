// libFuzzer entry point over HTTPServer's HTTP/1.1 request parser and the
// connection state machine. Not a SwiftPM target: scripts/fuzz.sh compiles
// it with Sources/HTTPServer/HTTP1, HTTPServerLimits, HTTPBodyLimits and Fuzz/Support
// into one module named HTTPServer (internal types reachable), with `-sanitize=fuzzer,address`.
//
// Input: byte 0 seeds the schedule (where the stream is split, how the fake
// clock moves, the per-connection request cap); the rest is what one
// connection receives. Seeds in Fuzz/HTTP1Fuzz/seeds/ are real requests.
// Oracles (a violation traps, which libFuzzer reports as a crash):
//   - split independence: feeding the stream in arbitrary pieces yields
//     exactly the events of feeding it whole (requests, 100-continue and
//     the failure with its reason);
//   - bounded output: what the parser yields never holds more bytes than
//     it was fed, and every request is within HTTPServerLimits (request line,
//     header block and count, body) and well-formed (implemented method,
//     origin-form target, token names, values without CR/LF/NUL, one Host
//     on HTTP/1.1, body length equal to Content-Length);
//   - the state machine, driven like the I/O layer does (reads only while
//     `wantsRead`, answers each dispatched request, fires due timers):
//     at most one request in flight, dispatched in parse order and never
//     more than the cap; nothing after a close; never stalled (not
//     reading, nothing in flight, yet open); without timers or caps every
//     parsed request is dispatched and the parser's failure is answered;
//     after the peer closes and every response is written, it is closed.

/// How the schedule byte configures one run.
struct FuzzPlan {
    /// Chunk sizes are 1...chunkSizeMax bytes.
    let chunkSizeMax: Int
    /// Whether the fake clock jumps far enough to fire timers.
    let advancesClock: Bool
    let requestsPerConnectionMax: Int

    init(_ seed: UInt8) {
        let chunkSizes = [1, 2, 7, 64, 1024, HTTPServerLimits.readChunkBytes]
        chunkSizeMax = chunkSizes[Int(seed & 0x07) % chunkSizes.count]
        advancesClock = seed & 0x08 != 0
        requestsPerConnectionMax = seed & 0x30 == 0x30 ? 2 : HTTPServerLimits.requestsPerConnectionMax
    }
}

/// Bytes a request's parts hold (each must have come from the input).
func heldBytes(_ request: HTTPRequest) -> Int {
    request.method.utf8.count + request.target.utf8.count + request.body.count
        + request.headers.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.unicodeScalars.count }
}

func checkRequest(_ request: HTTPRequest) {
    require(HTTPRequestLine.implementedMethods.contains(request.method), "unimplemented method yielded")
    require(request.target.utf8.first == UInt8(ascii: "/"), "target is not origin-form")
    require(
        request.method.utf8.count + request.target.utf8.count + 10 <= HTTPServerLimits.requestLineBytesMax,
        "request line over the limit")
    require(request.headers.fields.count <= HTTPServerLimits.headerFieldCountMax, "too many header fields")
    let headBytes =
        request.method.utf8.count + request.target.utf8.count + 12
        + request.headers.fields.reduce(0) { $0 + $1.name.utf8.count + 1 + $1.value.unicodeScalars.count + 2 } + 2
    require(headBytes <= HTTPServerLimits.headerBlockBytesMax, "header block over the limit")
    require(request.body.count <= HTTPServerLimits.requestBodyBytesMax, "body over the limit")
    for field in request.headers.fields {
        require(!field.name.isEmpty && field.name.utf8.allSatisfy(HTTPByte.isTokenCharacter), "field name not a token")
        require(
            field.value.unicodeScalars.allSatisfy { $0.value <= 0xFF && $0 != "\r" && $0 != "\n" && $0 != "\0" },
            "field value with CR, LF, NUL or a non-Latin-1 scalar")
    }
    let hosts = request.headers.values("host").count
    require(hosts <= 1 && (request.version == .http1_0 || hosts == 1), "Host missing or repeated")
    let lengths = request.headers.values("content-length")
    if let length = lengths.first {
        require(request.headers.values("transfer-encoding").isEmpty, "Content-Length with Transfer-Encoding")
        let digits = length.split(separator: ",").first.map { $0.trimmingOWS } ?? ""
        require(Int(digits) == request.body.count, "body length differs from Content-Length")
    } else if request.headers.values("transfer-encoding").isEmpty {
        require(request.body.isEmpty, "body without framing")
    }
}

/// The parser alone: fed whole, then in pieces; both must agree.
func checkParser(_ stream: ArraySlice<UInt8>, chunks: [ArraySlice<UInt8>]) -> [HTTPParserEvent] {
    var whole = HTTPRequestParser(reportsHeadsWithBody: true)
    let expected = whole.feed(stream)
    var pieces = HTTPRequestParser(reportsHeadsWithBody: true)
    var events: [HTTPParserEvent] = []
    var fedBytes = 0
    for chunk in chunks {
        let new = pieces.feed(chunk)
        fedBytes += chunk.count
        require(new.count <= fedBytes + 1, "more events than bytes")
        events += new
    }
    require(events == expected, "events depend on how the stream was split")
    var held = 0
    var failures = 0
    for event in expected {
        switch event {
        case .request(let request):
            require(failures == 0, "a request after the failure")
            checkRequest(request)
            held += heldBytes(request)
        case .failure:
            failures += 1
        case .bodyFollows(let head):
            require(failures == 0, "a head after the failure")
            require(
                head.target.utf8.count <= HTTPServerLimits.requestLineBytesMax, "a head beyond the request line's limit"
            )
        case .continueRequired:
            break
        }
    }
    require(failures <= 1, "more than one failure")
    require(held <= stream.count, "the parser yielded more bytes than it was fed")
    require(whole.hasFailed == (failures == 1), "hasFailed disagrees with the events")
    return expected
}

/// The connection state machine, driven as the I/O layer drives it.
struct ConnectionDriver {
    var machine: HTTPConnectionStateMachine
    var now: Int64 = 0
    var inFlight = false
    var closed = false
    var dispatched: [HTTPRequest] = []
    var errorAnswered: HTTPRequestError?
    var timerFired = false
    var keepAliveRefused = false
    /// The peer closed with a request in flight: that request is cancelled and
    /// what was queued behind it (requests, a parse failure) is dropped unanswered.
    var peerClosedInFlight = false

    init(plan: FuzzPlan) {
        machine = HTTPConnectionStateMachine(
            nowMilliseconds: 0, requestsPerConnectionMax: plan.requestsPerConnectionMax)
    }

    mutating func perform(_ actions: [HTTPConnectionAction], inFlightBefore: Bool) {
        for (position, action) in actions.enumerated() {
            require(!closed, "an action after close")
            switch action {
            case .writeContinue:
                require(!inFlightBefore && !inFlight, "100-continue overtook a response")
            case .dispatch(let request, let keepAlive):
                require(!inFlight, "two requests in flight")
                require(position == actions.count - 1, "dispatch is not the last action")
                checkRequest(request)
                inFlight = true
                dispatched.append(request)
                require(dispatched.count <= machine.requestsPerConnectionMax, "more requests than the cap")
                if !keepAlive { keepAliveRefused = true }
                if dispatched.count == machine.requestsPerConnectionMax {
                    require(!keepAlive, "keep-alive past the cap")
                }
            case .writeErrorAndClose(let error):
                require(position == actions.count - 1, "actions after writeErrorAndClose")
                require(!inFlight, "an error answer while a request is in flight")
                errorAnswered = error
                closed = true
            case .writeResponseAndClose:
                // Only a machine that screens heads refuses one; this run's does not.
                require(false, "a head refused without screening")
            case .cancelInFlight:
                require(inFlight, "cancelInFlight without a request in flight")
                require(actions.count == 1, "cancelInFlight comes alone")
            case .close:
                require(position == actions.count - 1, "actions after close")
                closed = true
            }
        }
        require(machine.isClosed == closed, "isClosed without a close action, or a close action without isClosed")
        if closed { require(machine.isClosed && !machine.wantsRead, "closed but still reading") }
    }

    mutating func advanceClock(by milliseconds: Int64) {
        now += milliseconds
        guard let deadline = machine.deadlineMilliseconds, now >= deadline, !closed else { return }
        timerFired = true
        perform(machine.timerFired(nowMilliseconds: now), inFlightBefore: inFlight)
        require(closed, "a due timer did not close the connection")
    }

    mutating func answer() {
        inFlight = false
        now += 1
        perform(machine.responseWritten(nowMilliseconds: now), inFlightBefore: false)
    }

    mutating func run(_ chunks: [ArraySlice<UInt8>], plan: FuzzPlan, schedule: inout FuzzSchedule) {
        var next = 0
        while next < chunks.count && !closed {
            if plan.advancesClock {
                advanceClock(by: Int64(schedule.below(4) == 0 ? schedule.below(40_000) : schedule.below(50)))
                if closed { break }
            }
            if !inFlight {
                require(machine.deadlineMilliseconds != nil, "an open idle connection without a deadline")
            }
            if machine.wantsRead {
                let wasInFlight = inFlight
                perform(machine.bytesReceived(chunks[next], nowMilliseconds: now), inFlightBefore: wasInFlight)
                next += 1
            } else if inFlight {
                answer()
            } else {
                require(false, "stalled: not reading, nothing in flight, not closed")
            }
            // Answer the request in flight at random moments.
            if inFlight && !closed && schedule.below(3) == 0 { answer() }
        }
        if !closed {
            peerClosedInFlight = inFlight
            perform(machine.peerClosed(nowMilliseconds: now), inFlightBefore: inFlight)
        }
        var answers = 0
        while inFlight && !closed {
            answer()
            answers += 1
            require(answers <= HTTPServerLimits.pipelinedRequestCountMax + 1, "answers never end")
        }
        require(closed && machine.isClosed, "still open after the peer closed and every answer was written")
    }
}

func checkConnection(
    _ chunks: [ArraySlice<UInt8>], parsed: [HTTPParserEvent], plan: FuzzPlan, schedule: inout FuzzSchedule
) {
    var driver = ConnectionDriver(plan: plan)
    driver.run(chunks, plan: plan, schedule: &schedule)
    let requests = parsed.compactMap { if case .request(let request) = $0 { request } else { nil } }
    require(
        driver.dispatched.count <= requests.count
            && Array(requests.prefix(driver.dispatched.count)) == driver.dispatched,
        "dispatched requests are not the parsed ones in order")
    guard !driver.timerFired && !driver.keepAliveRefused && !driver.peerClosedInFlight else { return }
    if let error = driver.errorAnswered, error.reason == .tooManyPipelinedRequests { return }
    require(driver.dispatched.count == requests.count, "a parsed request was never dispatched")
    let failure = parsed.compactMap { if case .failure(let error) = $0 { error } else { nil } }.first
    require(driver.errorAnswered == failure, "the parser's failure was not the error answered")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func http1FuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let plan = FuzzPlan(input[0])
    var schedule = FuzzSchedule(seed: UInt64(input[0]))
    let stream = input[1...]
    let chunks = schedule.split(stream, pieceBytesMax: plan.chunkSizeMax)
    let parsed = checkParser(stream, chunks: chunks)
    checkConnection(chunks, parsed: parsed, plan: plan, schedule: &schedule)
    return 0
}
