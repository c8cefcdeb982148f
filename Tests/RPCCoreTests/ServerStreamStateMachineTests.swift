@testable import RPCCore
import XCTest

/// The per-stream server state machine, without I/O. Names: state, then event.
final class ServerStreamStateMachineTests: XCTestCase {
    private let now = ContinuousClock.now
    private let echoPath = "/test.v1.Test/Echo"

    private func requestHeaders(
        path: String? = nil, contentType: String = "application/grpc", extra: [(String, String)] = []
    ) -> [HTTPHeaderField] {
        var fields = [
            HTTPHeaderField(name: ":method", value: "POST"),
            HTTPHeaderField(name: ":scheme", value: "http"),
            HTTPHeaderField(name: ":path", value: path ?? echoPath),
            HTTPHeaderField(name: "content-type", value: contentType),
            HTTPHeaderField(name: "te", value: "trailers"),
        ]
        fields += extra.map { HTTPHeaderField(name: $0.0, value: $0.1) }
        return fields
    }

    private func known(_ path: String) -> Bool { path == echoPath }

    private func openMachine(limits: RPCLimits = .default, extra: [(String, String)] = []) -> ServerStreamStateMachine {
        var machine = ServerStreamStateMachine(limits: limits)
        guard
            case .accept = machine.receiveHeaders(
                requestHeaders(extra: extra), endStream: false, now: now, isKnownPath: known)
        else {
            XCTFail("headers not accepted")
            return machine
        }
        return machine
    }

    private func status(_ fields: [HTTPHeaderField]) -> String? { fields.first(named: "grpc-status") }

    // MARK: clientIdleServerIdle

    func testReceiveHeadersWhenClientIdleServerIdleAccepts() {
        var machine = ServerStreamStateMachine()
        let action = machine.receiveHeaders(
            requestHeaders(extra: [("x-user", "42")]), endStream: false, now: now, isKnownPath: known)
        guard case .accept(let head) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(head.method, MethodDescriptor(service: "test.v1.Test", method: "Echo"))
        XCTAssertEqual(head.metadata[stringValues: "x-user"], ["42"])
        XCTAssertNil(head.deadline)
        XCTAssertTrue(head.metadata["te"].isEmpty, "reserved headers are not metadata")
    }

    func testReceiveHeadersWithTimeoutWhenClientIdleServerIdleSetsDeadline() {
        var machine = ServerStreamStateMachine()
        let action = machine.receiveHeaders(
            requestHeaders(extra: [("grpc-timeout", "250m")]), endStream: false, now: now, isKnownPath: known)
        guard case .accept(let head) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(head.deadline, now.advanced(by: .milliseconds(250)))
    }

    func testReceiveHeadersWithGrpcProtoContentTypeWhenClientIdleServerIdleAccepts() {
        var machine = ServerStreamStateMachine()
        let action = machine.receiveHeaders(
            requestHeaders(contentType: "application/grpc+proto"), endStream: false, now: now, isKnownPath: known)
        guard case .accept = action else { return XCTFail("\(action)") }
    }

    func testReceiveHeadersWithJSONContentTypeWhenClientIdleServerIdleRespondsHTTP415() {
        var machine = ServerStreamStateMachine()
        let action = machine.receiveHeaders(
            requestHeaders(contentType: "application/json"), endStream: false, now: now, isKnownPath: known)
        XCTAssertEqual(action, .respond([HTTPHeaderField(name: ":status", value: "415")]))
    }

    func testReceiveHeadersWithGetWhenClientIdleServerIdleRespondsHTTP405() {
        var machine = ServerStreamStateMachine()
        var fields = requestHeaders()
        fields[0].value = "GET"
        XCTAssertEqual(
            machine.receiveHeaders(fields, endStream: true, now: now, isKnownPath: known),
            .respond([HTTPHeaderField(name: ":status", value: "405")]))
    }

    func testReceiveHeadersForUnknownMethodWhenClientIdleServerIdleRespondsUnimplemented() {
        var machine = ServerStreamStateMachine()
        guard
            case .respond(let fields) = machine.receiveHeaders(
                requestHeaders(path: "/x.Y/Z"), endStream: false, now: now, isKnownPath: known)
        else {
            return XCTFail()
        }
        XCTAssertEqual(fields.first(named: ":status"), "200")
        XCTAssertEqual(status(fields), "12")
    }

    func testReceiveHeadersWithMalformedPathWhenClientIdleServerIdleRespondsUnimplemented() {
        var machine = ServerStreamStateMachine()
        guard
            case .respond(let fields) = machine.receiveHeaders(
                requestHeaders(path: "/only-one-part"), endStream: false, now: now, isKnownPath: { _ in true })
        else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "12")
    }

    func testReceiveHeadersWithGzipEncodingWhenClientIdleServerIdleRespondsUnimplementedWithAcceptEncoding() {
        var machine = ServerStreamStateMachine()
        guard
            case .respond(let fields) = machine.receiveHeaders(
                requestHeaders(extra: [("grpc-encoding", "gzip")]), endStream: false, now: now, isKnownPath: known)
        else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "12")
        XCTAssertEqual(fields.first(named: "grpc-accept-encoding"), "identity")
    }

    func testReceiveHeadersWithMalformedTimeoutWhenClientIdleServerIdleRespondsInternal() {
        var machine = ServerStreamStateMachine()
        guard
            case .respond(let fields) = machine.receiveHeaders(
                requestHeaders(extra: [("grpc-timeout", "soon")]), endStream: false, now: now, isKnownPath: known)
        else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    func testReceiveHeadersWithBadBase64WhenClientIdleServerIdleRespondsInternal() {
        var machine = ServerStreamStateMachine()
        guard
            case .respond(let fields) = machine.receiveHeaders(
                requestHeaders(extra: [("x-bin", "!!!")]), endStream: false, now: now, isKnownPath: known)
        else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    func testReceiveHeadersWithEndStreamWhenClientIdleServerIdleRespondsMissingMessage() {
        var machine = ServerStreamStateMachine()
        guard
            case .respond(let fields) = machine.receiveHeaders(
                requestHeaders(), endStream: true, now: now, isKnownPath: known)
        else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    // MARK: Events that cannot happen (release behaviour: a typed INTERNAL answer)

    private func releaseMachine() -> ServerStreamStateMachine {
        ServerStreamStateMachine(assertsOnInvariantViolation: false)
    }

    func testDeadlineExpiredWhenClientIdleServerIdleIsAnInvariantViolation() {
        var machine = releaseMachine()
        guard case .cancelAndRespond(let fields) = machine.deadlineExpired() else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
        XCTAssertEqual(machine.deadlineExpired(), .none, "the stream is closed afterwards")
    }

    func testReceiveDataWhenClientIdleServerIdleIsAnInvariantViolation() {
        var machine = releaseMachine()
        guard case .respond(let fields) = machine.receiveData([0, 0, 0, 0, 0], endStream: true) else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    func testHandlerFinishedWhenClientIdleServerIdleIsAnInvariantViolation() {
        var machine = releaseMachine()
        guard case .respond(let fields) = machine.handlerFinished(.success(ServerResponse(message: []))) else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    // MARK: clientOpenServerIdle

    func testReceiveDataInPiecesWhenClientOpenServerIdleRunsHandlerAtEndStream() {
        var machine = openMachine()
        let framed = MessageFramer.frame([1, 2, 3])
        XCTAssertEqual(machine.receiveData(Array(framed[0..<2]), endStream: false), .none)
        XCTAssertEqual(machine.receiveData(Array(framed[2...]), endStream: false), .none)
        guard case .runHandler(_, let message) = machine.receiveData([], endStream: true) else { return XCTFail() }
        XCTAssertEqual(message, [1, 2, 3])
    }

    func testReceiveOversizedPrefixWhenClientOpenServerIdleRespondsResourceExhausted() {
        var limits = RPCLimits()
        limits.messageSizeBytesMax = 10
        var machine = openMachine(limits: limits)
        guard case .respond(let fields) = machine.receiveData([0, 0, 0, 0, 11], endStream: false) else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "8")
        XCTAssertEqual(machine.receiveData([1], endStream: true), .none, "later data is ignored")
    }

    func testReceiveCompressedFlagWhenClientOpenServerIdleRespondsInternal() {
        var machine = openMachine()
        guard case .respond(let fields) = machine.receiveData([1, 0, 0, 0, 1, 9], endStream: true) else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    func testReceiveTruncatedPrefixWhenClientOpenServerIdleRespondsInternal() {
        var machine = openMachine()
        guard case .respond(let fields) = machine.receiveData([0, 0, 0], endStream: true) else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
    }

    func testReceiveShortBodyWhenClientOpenServerIdleRespondsInternal() {
        var machine = openMachine()
        guard case .respond(let fields) = machine.receiveData([0, 0, 0, 0, 9, 1, 2], endStream: true) else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    /// Found by Fuzz/GRPCFuzz: a whole message, then a second one's length
    /// prefix and END_STREAM, ran the handler with the first message.
    func testReceiveMessageAndBarePrefixWhenClientOpenServerIdleRespondsInternal() {
        var machine = openMachine()
        let data = MessageFramer.frame([1]) + [0, 0, 0, 0, 3]
        guard case .respond(let fields) = machine.receiveData(data, endStream: true) else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
    }

    func testReceiveTwoMessagesWhenClientOpenServerIdleRespondsInternal() {
        var machine = openMachine()
        guard
            case .respond(let fields) = machine.receiveData(
                MessageFramer.frame([1]) + MessageFramer.frame([2]), endStream: true)
        else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
    }

    /// A second message is refused at its length prefix, before its body
    /// arrives (it was refused only once complete, after buffering it).
    func testReceiveSecondPrefixWhenClientOpenServerIdleRespondsInternalAtOnce() {
        var machine = openMachine()
        XCTAssertEqual(machine.receiveData(MessageFramer.frame([1]), endStream: false), .none)
        XCTAssertTrue(machine.isReceivingRequest)
        XCTAssertEqual(machine.receiveData([0, 0, 0x10], endStream: false), .none, "three bytes are not a prefix yet")
        guard case .respond(let fields) = machine.receiveData([0, 0], endStream: false) else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
        XCTAssertEqual(fields.first(named: "grpc-message"), "Too many request messages for a unary call")
        XCTAssertFalse(machine.isReceivingRequest, "nothing more is buffered")
        XCTAssertEqual(machine.receiveData([UInt8](repeating: 7, count: 64), endStream: true), .none)
    }

    func testReceiveMessageAndSecondPrefixInOneChunkWhenClientOpenServerIdleRespondsInternal() {
        var machine = openMachine()
        guard
            case .respond(let fields) = machine.receiveData(
                MessageFramer.frame([1]) + [0, 0, 1, 0, 0, 9, 9], endStream: false)
        else {
            return XCTFail()
        }
        XCTAssertEqual(status(fields), "13")
    }

    func testBufferedBytesLimitExceededWhenClientOpenServerIdleRespondsResourceExhausted() {
        var machine = openMachine()
        XCTAssertEqual(machine.receiveData([0, 0, 0, 0, 9, 1, 2], endStream: false), .none)
        guard case .respond(let fields) = machine.bufferedBytesLimitExceeded() else { return XCTFail() }
        XCTAssertEqual(status(fields), "8")
        XCTAssertFalse(machine.isReceivingRequest)
        XCTAssertEqual(machine.receiveData([3, 4, 5, 6, 7, 8, 9], endStream: true), .none, "later data is ignored")
        XCTAssertEqual(machine.bufferedBytesLimitExceeded(), .none)
    }

    func testBufferedBytesLimitExceededWhenClientIdleServerIdleIsAnInvariantViolation() {
        var machine = releaseMachine()
        guard case .respond(let fields) = machine.bufferedBytesLimitExceeded() else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
    }

    func testReceiveNoMessageWhenClientOpenServerIdleRespondsInternal() {
        var machine = openMachine()
        guard case .respond(let fields) = machine.receiveData([], endStream: true) else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
    }

    func testDeadlineExpiredWhenClientOpenServerIdleRespondsDeadlineExceeded() {
        var machine = openMachine()
        guard case .cancelAndRespond(let fields) = machine.deadlineExpired() else { return XCTFail() }
        XCTAssertEqual(status(fields), "4")
        XCTAssertEqual(machine.receiveData(MessageFramer.frame([1]), endStream: true), .none)
    }

    func testStreamClosedWhenClientOpenServerIdleNeedsNoCancel() {
        var machine = openMachine()
        XCTAssertEqual(machine.streamClosed(), .none)
    }

    // MARK: clientClosedServerIdle (handler running)

    private func runningMachine() -> ServerStreamStateMachine {
        var machine = openMachine()
        _ = machine.receiveData(MessageFramer.frame([5]), endStream: true)
        return machine
    }

    func testReceiveDataWhenClientClosedServerIdleIsAnInvariantViolation() {
        var machine = ServerStreamStateMachine(assertsOnInvariantViolation: false)
        _ = machine.receiveHeaders(requestHeaders(), endStream: false, now: now, isKnownPath: known)
        _ = machine.receiveData(MessageFramer.frame([5]), endStream: true)
        guard case .respond(let fields) = machine.receiveData([1], endStream: true) else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
        XCTAssertEqual(
            machine.handlerFinished(.success(ServerResponse(message: []))), .none, "the late result is dropped")
    }

    func testHandlerSucceededWhenClientClosedServerIdleSendsHeadersDataTrailers() {
        var machine = runningMachine()
        var initial = Metadata()
        initial.addString("a", forKey: "x-initial")
        var trailing = Metadata()
        trailing.addBinary([1, 2], forKey: "x-trail-bin")
        let action = machine.handlerFinished(
            .success(ServerResponse(message: [9, 9], metadata: initial, trailingMetadata: trailing)))
        guard case .send(let headers, let data, let trailers) = action else { return XCTFail("\(action)") }
        XCTAssertEqual(headers.first(named: ":status"), "200")
        XCTAssertEqual(headers.first(named: "content-type"), "application/grpc")
        XCTAssertEqual(headers.first(named: "x-initial"), "a")
        XCTAssertEqual(data, [0, 0, 0, 0, 2, 9, 9])
        XCTAssertEqual(trailers.first(named: "grpc-status"), "0")
        XCTAssertEqual(trailers.first(named: "x-trail-bin"), "AQI=")
    }

    func testHandlerFailedWhenClientClosedServerIdleRespondsTrailersOnlyWithEncodedMessage() {
        var machine = runningMachine()
        let action = machine.handlerFinished(.failure(RPCError(code: .notFound, message: "no such 100% thing ✓")))
        guard case .respond(let fields) = action else { return XCTFail() }
        XCTAssertEqual(fields.first(named: ":status"), "200")
        XCTAssertEqual(status(fields), "5")
        XCTAssertEqual(fields.first(named: "grpc-message"), "no such 100%25 thing %E2%9C%93")
    }

    func testHandlerReturnedOversizedResponseWhenClientClosedServerIdleRespondsResourceExhausted() {
        var limits = RPCLimits()
        limits.messageSizeBytesMax = 4
        var machine = openMachine(limits: limits)
        _ = machine.receiveData(MessageFramer.frame([5]), endStream: true)
        guard case .respond(let fields) = machine.handlerFinished(.success(ServerResponse(message: [1, 2, 3, 4, 5])))
        else { return XCTFail() }
        XCTAssertEqual(status(fields), "8")
    }

    func testDeadlineExpiredWhenClientClosedServerIdleCancelsAndResponds() {
        var machine = runningMachine()
        guard case .cancelAndRespond(let fields) = machine.deadlineExpired() else { return XCTFail() }
        XCTAssertEqual(status(fields), "4")
        // The handler's late result is dropped.
        XCTAssertEqual(machine.handlerFinished(.success(ServerResponse(message: []))), .none)
    }

    func testStreamClosedWhenClientClosedServerIdleCancelsHandler() {
        var machine = runningMachine()
        XCTAssertEqual(machine.streamClosed(), .cancelHandler)
        XCTAssertEqual(machine.handlerFinished(.success(ServerResponse(message: []))), .none)
    }

    // MARK: clientClosedServerClosed

    func testBufferedBytesLimitExceededWhenClientClosedServerIdleIsAnInvariantViolation() {
        var machine = ServerStreamStateMachine(assertsOnInvariantViolation: false)
        _ = machine.receiveHeaders(requestHeaders(), endStream: false, now: now, isKnownPath: known)
        _ = machine.receiveData(MessageFramer.frame([5]), endStream: true)
        XCTAssertFalse(machine.isReceivingRequest, "the handler has the message")
        guard case .respond(let fields) = machine.bufferedBytesLimitExceeded() else { return XCTFail() }
        XCTAssertEqual(status(fields), "13")
    }

    func testEventsWhenClientClosedServerClosedDoNothing() {
        var machine = runningMachine()
        _ = machine.handlerFinished(.success(ServerResponse(message: [])))
        XCTAssertEqual(machine.deadlineExpired(), .none)
        XCTAssertEqual(machine.streamClosed(), .none)
        XCTAssertEqual(machine.receiveData([0], endStream: true), .none)
        XCTAssertEqual(machine.handlerFinished(.success(ServerResponse(message: []))), .none)
    }

    /// Found by Fuzz/GRPCFuzz: trailers arriving after the deadline answer
    /// produced a second answer on a stream already ended.
    func testReceiveHeadersAfterDeadlineAnswerWhenClientClosedServerClosedDoesNothing() {
        var machine = openMachine()
        guard case .cancelAndRespond = machine.deadlineExpired() else { return XCTFail() }
        XCTAssertEqual(
            machine.receiveHeaders(
                [HTTPHeaderField(name: "x-trailer", value: "1")], endStream: true, now: now, isKnownPath: known), .none)
        XCTAssertEqual(machine.receiveHeaders(requestHeaders(), endStream: false, now: now, isKnownPath: known), .none)
    }
}
