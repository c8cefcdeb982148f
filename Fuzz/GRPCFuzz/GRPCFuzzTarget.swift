// libFuzzer entry point over the gRPC message deframer and the server's
// per-call stream state machine. Not a SwiftPM target: scripts/fuzz.sh
// compiles it with Sources/RPCCore (which imports no C module) and
// Fuzz/Support into one module named RPCCore, with
// `-sanitize=fuzzer,address`.
//
// Byte 0 picks the mode (bit 0) and seeds the schedule (the rest).
//   Mode 0, the deframer: byte 1 picks messageSizeBytesMax; the rest is a
//   request body split at arbitrary points. Oracles: the messages and the
//   failure do not depend on the split; each message is within the limit;
//   re-framing the messages gives back exactly the bytes they came from;
//   `finish()` fails exactly when bytes are left over.
//   Mode 1, ServerStreamStateMachine: the rest is a program of events
//   (headers with arbitrary fields, data chunks, handler results, deadline,
//   stream closed). Oracles: every header list sent starts with ":status",
//   has lower-case names and printable-ASCII values (no header injection
//   through a path, message or metadata), and a Trailers-Only answer
//   carries a grpc-status that is a number; the handler runs at most once,
//   with exactly the one message the data carried (checked by an
//   independent deframe), within the size limit; a sent response frames the
//   handler's message; after the stream closes nothing is sent; a deadline
//   is never later than the cap. Metadata, grpc-timeout, grpc-message and
//   base64 round-trip checks ride along on the same bytes.

/// Message size limits the deframer is tried with (small ones make the
/// too-large path reachable).
let messageSizeLimits = [0, 1, 5, 64, 1024, RPCLimits.default.messageSizeBytesMax]

/// Deframes `pieces` in order: the messages and the failure, if any.
func deframe(_ pieces: [ArraySlice<UInt8>], limit: Int, finish: Bool) -> (
    messages: [[UInt8]], failure: MessageDeframer.Failure?
) {
    var deframer = MessageDeframer(messageSizeBytesMax: limit)
    var messages: [[UInt8]] = []
    do {
        for piece in pieces {
            deframer.append(piece)
            while let message = try deframer.next() { messages.append(message) }
        }
        if finish { try deframer.finish() }
    } catch {
        return (messages, error)
    }
    return (messages, nil)
}

func checkDeframer(_ input: inout FuzzInput, schedule: inout FuzzSchedule) {
    let limit = messageSizeLimits[Int(input.byte()) % messageSizeLimits.count]
    let stream = input.rest()
    let whole = deframe([stream], limit: limit, finish: true)
    let pieces = schedule.split(stream, pieceBytesMax: 1 + schedule.below(64))
    let split = deframe(pieces, limit: limit, finish: true)
    require(split.messages == whole.messages && split.failure == whole.failure, "deframing depends on the split")
    var reframed: [UInt8] = []
    for message in whole.messages {
        require(message.count <= limit, "a message over the limit")
        reframed += MessageFramer.frame(message)
    }
    require(Array(stream.prefix(reframed.count)) == reframed, "re-framed messages differ from their bytes")
    switch whole.failure {
    case nil:
        require(reframed.count == stream.count, "finish() accepted leftover bytes (an unfinished message)")
    case .truncated(let buffered)?:
        // The count is of body bytes once a prefix was read, of all bytes before.
        let left = stream.count - reframed.count
        require(left > 0, "truncated with nothing left over")
        require(buffered == left || buffered == left - MessageFramer.prefixBytes, "truncated count is wrong")
    case .messageTooLarge(let announced)?:
        require(announced > limit, "too large below the limit")
    case .compressedMessage?, .invalidFlag?:
        require(stream.count - reframed.count >= MessageFramer.prefixBytes, "a flag failure without a prefix")
    }
}

// MARK: The stream state machine.

let knownNames = [
    ":method", ":path", ":scheme", ":authority", "content-type", "te", "grpc-timeout", "grpc-encoding",
    "grpc-accept-encoding", "user-agent", "x-request-id", "trace-bin", "authorization", "grpc-status", "x-Upper",
]
let knownValues = [
    "POST", "GET", "/points.v1.Points/Grant", "/payments.v1.Payments/VerifyTransaction", "/grpc.health.v1.Health/Check",
    "application/grpc", "application/grpc+proto", "application/grpc; charset=utf-8", "trailers", "http",
    "1S", "100m", "99999999H", "5n", "identity", "gzip", "AAEC", "AAE=", "a,b", "req-1", "",
]
let knownPaths: Set<String> = [
    "/points.v1.Points/Grant", "/payments.v1.Payments/VerifyTransaction", "/grpc.health.v1.Health/Check",
]

func fuzzString(_ input: inout FuzzInput, from table: [String]) -> String {
    let choice = Int(input.byte())
    if choice < 192 { return table[choice % table.count] }
    return String(decoding: input.bytes(Int(input.byte()) % 48), as: UTF8.self)
}

func fuzzFields(_ input: inout FuzzInput) -> [HTTPHeaderField] {
    let count = Int(input.byte()) % 12
    return (0..<count).map { _ in
        HTTPHeaderField(name: fuzzString(&input, from: knownNames), value: fuzzString(&input, from: knownValues))
    }
}

func fuzzMetadata(_ input: inout FuzzInput) -> Metadata {
    var metadata = Metadata()
    for field in fuzzFields(&input) {
        if input.byte() & 1 == 0 {
            metadata.addString(field.value, forKey: field.name)
        } else {
            metadata.addBinary(Array(field.value.utf8), forKey: field.name)
        }
    }
    return metadata
}

/// What a header list we send may hold: lower-case names, printable-ASCII
/// values (no header injection through a path, a message or metadata).
func checkFieldSyntax(_ fields: [HTTPHeaderField]) {
    for field in fields {
        require(
            !field.name.isEmpty && field.name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && !(0x41...0x5A).contains($0) },
            "a header name that is not lower-case ASCII: \(field.name.debugDescription)")
        require(
            field.value.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E },
            "a header value with a byte outside printable ASCII")
    }
}

/// Response headers: ":status" first; a Trailers-Only 200 carries a numeric grpc-status.
/// Whether a trailers-only answer is the state machine's loud failure for an
/// event a conforming transport never delivers (INTERNAL, then closed).
func isInternalFailure(_ fields: [HTTPHeaderField]) -> Bool {
    fields.contains { $0.name == "grpc-status" && $0.value == "13" }
}

func checkResponseFields(_ fields: [HTTPHeaderField], trailersOnly: Bool) {
    require(fields.first?.name == ":status", "a header list not starting with :status")
    checkFieldSyntax(fields)
    if trailersOnly, fields.first?.value == "200" {
        let status = fields.first(named: "grpc-status")
        require(status.flatMap { Int($0) } != nil, "Trailers-Only without a numeric grpc-status")
    }
}

/// Drives one call; `open` tracks what the oracle expects.
struct StreamDriver {
    var machine = ServerStreamStateMachine(
        limits: {
            var limits = RPCLimits()
            limits.messageSizeBytesMax = 256
            limits.deadlineMax = .seconds(60)
            return limits
        }())
    let start = ContinuousClock.Instant.now
    /// Every data byte received while the request was open, for the independent deframe.
    var requestBytes: [UInt8] = []
    var accepted = false
    var handlerRuns = 0
    var closed = false

    mutating func step(_ input: inout FuzzInput) {
        switch input.byte() % 5 {
        case 0: receiveHeaders(&input)
        case 1: receiveData(&input)
        case 2: finishHandler(&input)
        case 3:
            let result = machine.deadlineExpired()
            if case .cancelAndRespond(let fields) = result {
                require(!closed, "a deadline answer on a closed stream")
                checkResponseFields(fields, trailersOnly: true)
                if !(accepted || handlerRuns == 1) {
                    // No headers armed a deadline: a caller's bug, answered loudly (INTERNAL).
                    require(
                        isInternalFailure(fields),
                        "a deadline before the headers not answered INTERNAL")
                }
                closed = true
            }
        default:
            let result = machine.streamClosed()
            require(result == .none || (handlerRuns == 1 && !closed), "cancelHandler without a running handler")
            closed = true
        }
    }

    mutating func receiveHeaders(_ input: inout FuzzInput) {
        let fields = fuzzFields(&input)
        let endStream = input.byte() & 1 == 1
        let wasIdle = !accepted && !closed
        let result = machine.receiveHeaders(
            fields, endStream: endStream, now: start, isKnownPath: { knownPaths.contains($0) })
        switch result {
        case .none:
            require(closed, "headers ignored on a stream not yet answered")
        case .accept(let head):
            require(wasIdle && !endStream, "headers accepted twice, after close, or with END_STREAM")
            require(fields.first(named: ":method") == "POST", "accepted without POST")
            let path = fields.first(named: ":path")
            require(path == head.method.path && knownPaths.contains(head.method.path), "the method is not the :path")
            if let deadline = head.deadline {
                require(deadline <= start.advanced(by: machine.limits.deadlineMax), "deadline past the cap")
            }
            for entry in head.metadata { require(!Metadata.isReserved(entry.key), "reserved header kept as metadata") }
            accepted = true
        case .respond(let fields):
            require(!closed, "an answer to headers on a stream already answered")
            checkResponseFields(fields, trailersOnly: true)
            closed = true
        }
    }

    mutating func receiveData(_ input: inout FuzzInput) {
        let bytes = Array(input.bytes(input.uint16() % 600))
        let endStream = input.byte() & 1 == 1
        let wasOpen = accepted && !closed && handlerRuns == 0
        if wasOpen { requestBytes += bytes }
        switch machine.receiveData(bytes, endStream: endStream) {
        case .none:
            require(!wasOpen || !endStream, "END_STREAM on an open request did nothing")
        case .runHandler(_, let message):
            require(wasOpen && endStream, "the handler ran before the request ended")
            let independent = deframe([requestBytes[...]], limit: machine.limits.messageSizeBytesMax, finish: true)
            require(
                independent.failure == nil && independent.messages == [message],
                "the handler got a message other than the one sent")
            handlerRuns += 1
        case .respond(let fields):
            checkResponseFields(fields, trailersOnly: true)
            if !wasOpen {
                // Data before the headers or after END_STREAM cannot come from
                // a conforming transport: the machine fails loudly (INTERNAL)
                // and closes (ServerStreamStateMachine.receiveData).
                require(!closed, "an answer to data on a stream already answered")
                require(
                    isInternalFailure(fields),
                    "data on a stream that was not open not answered INTERNAL")
            }
            closed = true
        }
    }

    mutating func finishHandler(_ input: inout FuzzInput) {
        let result: Result<ServerResponse<[UInt8]>, RPCError>
        if input.byte() & 1 == 0 {
            let message = Array(input.bytes(input.uint16() % 400))
            result = .success(
                ServerResponse(message: message, metadata: fuzzMetadata(&input), trailingMetadata: fuzzMetadata(&input))
            )
        } else {
            let code = RPCError.Code(rawValue: Int(input.byte()) % 17)
            let message = String(decoding: input.bytes(Int(input.byte()) % 64), as: UTF8.self)
            result = .failure(RPCError(code: code, message: message, metadata: fuzzMetadata(&input)))
        }
        let running = handlerRuns == 1 && !closed
        switch machine.handlerFinished(result) {
        case .none:
            require(!running, "a running handler's result was dropped")
        case .send(let headers, let data, let trailers):
            require(running, "a response without a running handler")
            checkResponseFields(headers, trailersOnly: false)
            checkFieldSyntax(trailers)
            require(trailers.first?.name == "grpc-status", "trailers not starting with grpc-status")
            guard case .success(let response) = result else { return require(false, "sent a failure as a message") }
            require(data == MessageFramer.frame(response.message), "the data is not the framed message")
            closed = true
        case .respond(let fields):
            checkResponseFields(fields, trailersOnly: true)
            if !running {
                // A result with no handler running is a caller's bug: the
                // machine fails loudly (INTERNAL, trailers-only) and closes
                // the stream (ServerStreamStateMachine.handlerFinished).
                require(!closed, "an answer on a stream already answered")
                require(
                    isInternalFailure(fields),
                    "a result without a running handler not answered INTERNAL")
            }
            closed = true
        }
    }
}

/// Round trips that need no state: grpc-timeout, grpc-message, base64, metadata.
func checkEncodings(_ bytes: ArraySlice<UInt8>) {
    let text = String(decoding: bytes, as: UTF8.self)
    require(GRPCMessageEncoding.decode(GRPCMessageEncoding.encode(text)) == text, "grpc-message round trip")
    require(Base64.decode(Base64.encode(Array(bytes))) == Array(bytes), "base64 round trip")
    // Every prefix that could be a grpc-timeout (2...9 bytes).
    for length in 2...min(9, max(2, bytes.count)) {
        guard let duration = GRPCTimeout.parse(String(decoding: bytes.prefix(length), as: UTF8.self)) else { continue }
        require(duration >= .zero, "negative grpc-timeout")
        let reparsed = GRPCTimeout.parse(GRPCTimeout.encode(duration))
        require(reparsed != nil && reparsed! >= duration, "grpc-timeout re-encoding shortened the deadline")
    }
    if let path = MethodDescriptor(path: text) {
        require(path.path == text, "MethodDescriptor does not round-trip its :path")
    }
    var fieldInput = FuzzInput(Array(bytes))
    let fields = fuzzFields(&fieldInput)
    if let metadata = try? Metadata.fromWire(fields) {
        checkFieldSyntax(metadata.wireFields())
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func grpcFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    var input = FuzzInput(Array(UnsafeBufferPointer(start: data, count: size)))
    let mode = input.byte()
    var schedule = FuzzSchedule(seed: UInt64(mode >> 1))
    if mode & 1 == 0 {
        checkDeframer(&input, schedule: &schedule)
    } else {
        checkEncodings(UnsafeBufferPointer(start: data, count: size)[1...].prefix(256).map { $0 }[...])
        var driver = StreamDriver()
        var steps = 0
        while !input.isAtEnd && steps < 64 {
            driver.step(&input)
            steps += 1
        }
    }
    return 0
}
