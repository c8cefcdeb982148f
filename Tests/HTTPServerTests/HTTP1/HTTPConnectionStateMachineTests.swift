import TestSupport
import XCTest
@testable import HTTPServer

/// The connection life cycle, driven by a fake clock: tests are named by
/// state and event, and assert on the returned actions only.
final class HTTPConnectionStateMachineTests: XCTestCase {
    private let get = Array("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
    private let getClose = Array("GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8)

    private func dispatched(_ actions: [HTTPConnectionAction]) -> [(HTTPRequest, Bool)] {
        actions.compactMap {
            if case .dispatch(let request, let keepAlive) = $0 { return (request, keepAlive) } else { return nil }
        }
    }

    func testIdleConnectionClosesAfterIdleTimeout() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 1_000)
        XCTAssertEqual(machine.deadlineMilliseconds, 1_000 + HTTPServerLimits.keepAliveIdleTimeoutMilliseconds)
        XCTAssertEqual(machine.timerFired(nowMilliseconds: 2_000), [], "early timer does nothing")
        XCTAssertEqual(
            machine.timerFired(nowMilliseconds: 1_000 + HTTPServerLimits.keepAliveIdleTimeoutMilliseconds), [.close])
        XCTAssertTrue(machine.isClosed)
        XCTAssertFalse(machine.wantsRead)
    }

    func testCompleteRequestWhenIdleIsDispatchedWithKeepAlive() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let actions = machine.bytesReceived(get, nowMilliseconds: 10)
        XCTAssertEqual(dispatched(actions).count, 1)
        XCTAssertEqual(dispatched(actions).first?.1, true)
        XCTAssertNil(machine.deadlineMilliseconds, "no read timeout while the handler runs")
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 50), [])
        XCTAssertEqual(machine.deadlineMilliseconds, 50 + HTTPServerLimits.keepAliveIdleTimeoutMilliseconds)
    }

    func testSlowLorisHeadTimesOutRegardlessOfTrickle() {
        // The release path: the last bytes arrive after closing, a bug the
        // I/O layer never commits, answered with nothing.
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, assertsOnInvariantViolation: false)
        var now: Int64 = 100
        let partialHead = Array("GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slow: ".utf8)
        for byte in partialHead {
            XCTAssertEqual(machine.bytesReceived([byte], nowMilliseconds: now), [])
            XCTAssertEqual(machine.deadlineMilliseconds, 100 + HTTPServerLimits.requestHeadTimeoutMilliseconds)
            now += 300
        }
        XCTAssertGreaterThan(
            now, 100 + HTTPServerLimits.requestHeadTimeoutMilliseconds, "the trickle outlasts the deadline")
        XCTAssertEqual(machine.deadlineMilliseconds, 100 + HTTPServerLimits.requestHeadTimeoutMilliseconds)
        XCTAssertEqual(
            machine.timerFired(nowMilliseconds: now), [.writeErrorAndClose(HTTPRequestError(.requestTimeout))])
        XCTAssertEqual(HTTPRequestError(.requestTimeout).status, 408)
        XCTAssertTrue(machine.isClosed)
        XCTAssertEqual(machine.bytesReceived(Array("\r\n\r\n".utf8), nowMilliseconds: now), [])
    }

    func testSlowBodyTimesOutAfterBodyTimeout() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let head = Array("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nab".utf8)
        XCTAssertEqual(machine.bytesReceived(head, nowMilliseconds: 5), [])
        XCTAssertEqual(machine.deadlineMilliseconds, 5 + HTTPServerLimits.requestBodyTimeoutMilliseconds)
        XCTAssertEqual(machine.bytesReceived(Array("cd".utf8), nowMilliseconds: 1_000), [])
        XCTAssertEqual(machine.deadlineMilliseconds, 5 + HTTPServerLimits.requestBodyTimeoutMilliseconds)
        XCTAssertEqual(
            machine.timerFired(nowMilliseconds: 5 + HTTPServerLimits.requestBodyTimeoutMilliseconds),
            [.writeErrorAndClose(HTTPRequestError(.requestTimeout))])
    }

    func testPipelinedRequestsAreDispatchedOneAtATimeInOrder() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let three = Array(
            "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n"
                .utf8)
        XCTAssertEqual(dispatched(machine.bytesReceived(three, nowMilliseconds: 0)).map { $0.0.target }, ["/1"])
        XCTAssertEqual(dispatched(machine.responseWritten(nowMilliseconds: 1)).map { $0.0.target }, ["/2"])
        XCTAssertEqual(dispatched(machine.responseWritten(nowMilliseconds: 2)).map { $0.0.target }, ["/3"])
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 3), [])
    }

    func testConnectionCloseRequestClosesAfterItsResponseAndDropsTheRest() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let actions = machine.bytesReceived(getClose + get, nowMilliseconds: 0)
        XCTAssertEqual(dispatched(actions).first?.1, false)
        XCTAssertFalse(machine.wantsRead)
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 1), [.close])
        XCTAssertTrue(machine.isClosed)
    }

    func testMaximumRequestsPerConnection() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, requestsPerConnectionMax: 2)
        XCTAssertEqual(dispatched(machine.bytesReceived(get + get + get, nowMilliseconds: 0)).first?.1, true)
        XCTAssertEqual(
            dispatched(machine.responseWritten(nowMilliseconds: 1)).first?.1, false, "the last one says close")
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 2), [.close])
    }

    func testParseErrorIsAnsweredAfterEarlierPipelinedRequests() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let actions = machine.bytesReceived(get + Array("GET / HTTP/3.0\r\n\r\n".utf8), nowMilliseconds: 0)
        XCTAssertEqual(dispatched(actions).count, 1)
        XCTAssertFalse(machine.wantsRead, "nothing more is read after a framing error")
        XCTAssertEqual(
            machine.responseWritten(nowMilliseconds: 1), [.writeErrorAndClose(HTTPRequestError(.unsupportedVersion))])
        XCTAssertTrue(machine.isClosed)
    }

    func testParseErrorWhenIdleIsAnsweredAtOnce() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        XCTAssertEqual(
            machine.bytesReceived(Array("GET / HTTP/1.1\r\nHost : a\r\n\r\n".utf8), nowMilliseconds: 0),
            [.writeErrorAndClose(HTTPRequestError(.whitespaceBeforeColon))])
    }

    func testExpectContinueWhenIdleWritesContinue() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let head = Array("POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8)
        XCTAssertEqual(machine.bytesReceived(head, nowMilliseconds: 0), [.writeContinue])
        XCTAssertEqual(
            dispatched(machine.bytesReceived(Array("ok".utf8), nowMilliseconds: 1)).first?.0.body, Array("ok".utf8))
    }

    func testExpectContinueBehindInFlightRequestIsWrittenWhenItsTurnComes() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        _ = machine.bytesReceived(get, nowMilliseconds: 0)
        let head = Array("POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8)
        XCTAssertEqual(machine.bytesReceived(head, nowMilliseconds: 1), [], "not before the answer ahead of it")
        // RFC 9110 10.1.1: the client waits for 100 or a final status; once
        // the answer ahead is out, the interim response is owed to it.
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 2), [.writeContinue])
        XCTAssertEqual(
            dispatched(machine.bytesReceived(Array("ok".utf8), nowMilliseconds: 3)).first?.0.body, Array("ok".utf8))
    }

    func testExpectContinueWhoseBodyCameAnywayIsNotWrittenLate() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        _ = machine.bytesReceived(get, nowMilliseconds: 0)
        let request = Array("POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok".utf8)
        XCTAssertEqual(machine.bytesReceived(request, nowMilliseconds: 1), [])
        let next = machine.responseWritten(nowMilliseconds: 2)
        XCTAssertEqual(dispatched(next).first?.0.body, Array("ok".utf8))
        XCTAssertFalse(next.contains(.writeContinue), "its body is here: no interim response after it")
    }

    func testPeerClosedWhileInFlightCancelsItDropsTheQueueAndClosesAfterTheResponse() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        _ = machine.bytesReceived(get + get, nowMilliseconds: 0)
        XCTAssertEqual(machine.peerClosed(nowMilliseconds: 1), [.cancelInFlight], "the client is gone: stop its work")
        XCTAssertFalse(machine.wantsRead)
        XCTAssertEqual(
            machine.responseWritten(nowMilliseconds: 2), [.close], "the queued request is dropped, not dispatched")
        XCTAssertTrue(machine.isClosed)
    }

    func testPeerClosedWhenIdleCloses() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        XCTAssertEqual(machine.peerClosed(nowMilliseconds: 1), [.close])
    }

    func testTooManyPipelinedRequestsStopsReadingAndEndsWithAnError() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        let burst = Array(repeating: get, count: HTTPServerLimits.pipelinedRequestCountMax + 3).flatMap { $0 }
        XCTAssertEqual(dispatched(machine.bytesReceived(burst, nowMilliseconds: 0)).count, 1)
        XCTAssertFalse(machine.wantsRead)
        var last: [HTTPConnectionAction] = []
        for step in 0..<(HTTPServerLimits.pipelinedRequestCountMax + 3) {
            last = machine.responseWritten(nowMilliseconds: Int64(step))
            if machine.isClosed { break }
        }
        XCTAssertEqual(last, [.writeErrorAndClose(HTTPRequestError(.tooManyPipelinedRequests))])
    }

    func testNewHeadAfterResponseGetsAFreshHeadDeadline() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        _ = machine.bytesReceived(get, nowMilliseconds: 0)
        _ = machine.responseWritten(nowMilliseconds: 100)
        _ = machine.bytesReceived(Array("GET".utf8), nowMilliseconds: 20_000)
        XCTAssertEqual(machine.deadlineMilliseconds, 20_000 + HTTPServerLimits.requestHeadTimeoutMilliseconds)
    }

    // MARK: Heads screened before their body

    private let postHead = Array("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n".utf8)
    private let refusal = HTTPResponse(status: 401, headers: HTTPHeaders(), body: Array("no".utf8))

    func testARefusedHeadIsAnsweredUnreadAndTheConnectionCloses() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, screensHeadsWithBody: true)
        var seen: [HTTPRequestHead] = []
        let actions = machine.bytesReceived(postHead + Array("ab".utf8), nowMilliseconds: 0) { head in
            seen.append(head)
            return self.refusal
        }
        XCTAssertEqual(seen.map(\.target), ["/x"])
        XCTAssertEqual(seen.first?.headers.first("content-length"), "5")
        XCTAssertEqual(actions, [.writeResponseAndClose(refusal)])
        XCTAssertTrue(machine.isClosed)
        XCTAssertFalse(machine.wantsRead, "the rest of the body is never read as a request")
        XCTAssertEqual(machine.heldByteCount, 0, "what came of the body is dropped")
    }

    func testAHeadTheScreenPassesIsReadAsUsual() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, screensHeadsWithBody: true)
        var screened = 0
        let actions = machine.bytesReceived(postHead + Array("hello".utf8) + get, nowMilliseconds: 0) { _ in
            screened += 1
            return nil
        }
        XCTAssertEqual(screened, 1, "only the head with a body is screened")
        XCTAssertEqual(actions.count, 1)
        guard case .dispatch(let request, true) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(request.body, Array("hello".utf8))
        guard case .dispatch(let next, true) = machine.responseWritten(nowMilliseconds: 1).first else {
            return XCTFail()
        }
        XCTAssertEqual(next.method, "GET")
    }

    func testARefusalWaitsForTheRequestsBeforeItAndDropsThoseAfter() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, screensHeadsWithBody: true)
        let first = machine.bytesReceived(get + postHead + Array("hello".utf8) + get, nowMilliseconds: 0) { _ in
            self.refusal
        }
        guard case .dispatch(let request, true)? = first.first, first.count == 1 else { return XCTFail("\(first)") }
        XCTAssertEqual(request.method, "GET")
        XCTAssertFalse(machine.wantsRead)
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 1), [.writeResponseAndClose(refusal)])
    }

    func testExpectContinueIsNotSentForARefusedHead() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, screensHeadsWithBody: true)
        let head = Array("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n".utf8)
        XCTAssertEqual(
            machine.bytesReceived(head, nowMilliseconds: 0) { _ in self.refusal }, [.writeResponseAndClose(refusal)])
    }

    func testWithoutScreeningNoHeadIsShown() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        var screened = 0
        _ = machine.bytesReceived(postHead + Array("hello".utf8), nowMilliseconds: 0) { _ in
            screened += 1
            return self.refusal
        }
        XCTAssertEqual(screened, 0)
    }

    /// Seeded random event sequences: never two requests in flight, nothing
    /// after closing, the request cap respected, and a deadline whenever the
    /// connection is open and idle-waiting.
    func testSeededRandomEventSequencesKeepInvariants() {
        var generator = SeededRandom(seed: 99)
        let pieces = [
            get, getClose, Array("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc".utf8),
            Array("GET / HTTP/1.1\r\nHost : a\r\n\r\n".utf8), Array("GE".utf8),
        ]
        for _ in 0..<500 {
            var machine = HTTPConnectionStateMachine(
                nowMilliseconds: 0, requestsPerConnectionMax: 5, screensHeadsWithBody: true)
            var screened = 0
            // Every third head with a body is refused unread.
            let screen: (HTTPRequestHead) -> HTTPResponse? = { _ in
                screened += 1
                return screened % 3 == 0 ? HTTPResponse(status: 401) : nil
            }
            var now: Int64 = 0
            var inFlight = false
            var closed = false
            var dispatchedCount = 0
            for _ in 0..<40 {
                now += Int64(generator.next() % 20_000)
                let actions: [HTTPConnectionAction]
                switch generator.next() % 4 {
                case 0, 1:
                    // As the I/O layer: bytes only while the machine reads
                    // (anything else is an invariant violation, tested below).
                    guard machine.wantsRead else { continue }
                    var bytes = pieces[Int(generator.next() % UInt64(pieces.count))]
                    bytes = Array(bytes.prefix(1 + Int(generator.next() % UInt64(bytes.count))))
                    actions = machine.bytesReceived(bytes, nowMilliseconds: now, screen: screen)
                case 2:
                    guard inFlight else { continue }
                    inFlight = false
                    actions = machine.responseWritten(nowMilliseconds: now)
                default:
                    actions = machine.timerFired(nowMilliseconds: now)
                }
                if closed { XCTAssertEqual(actions, [], "nothing after close") }
                for action in actions {
                    switch action {
                    case .dispatch:
                        XCTAssertFalse(inFlight, "one request at a time")
                        inFlight = true
                        dispatchedCount += 1
                    case .writeErrorAndClose, .writeResponseAndClose, .close:
                        closed = true
                    case .writeContinue:
                        XCTAssertFalse(inFlight)
                    case .cancelInFlight:
                        XCTAssertTrue(inFlight, "only a request in flight is cancelled")
                    }
                }
                XCTAssertLessThanOrEqual(dispatchedCount, 5)
                XCTAssertEqual(machine.isClosed, closed)
                if !closed && !inFlight { XCTAssertNotNil(machine.deadlineMilliseconds) }
            }
        }
    }

    // MARK: Impossible events (the release path: the assertion turned off)

    func testBytesWhileClosingAfterInFlightCloseTheConnection() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, assertsOnInvariantViolation: false)
        XCTAssertEqual(dispatched(machine.bytesReceived(getClose, nowMilliseconds: 1)).map(\.1), [false])
        XCTAssertFalse(machine.wantsRead)
        XCTAssertEqual(machine.bytesReceived(get, nowMilliseconds: 2), [.close])
        XCTAssertTrue(machine.isClosed)
        XCTAssertFalse(machine.wantsRead)
        XCTAssertNil(machine.deadlineMilliseconds)
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 3), [], "the dropped request's answer changes nothing")
        XCTAssertEqual(machine.peerClosed(nowMilliseconds: 4), [])
    }

    func testBytesAfterCloseChangeNothing() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, assertsOnInvariantViolation: false)
        XCTAssertEqual(machine.timerFired(nowMilliseconds: HTTPServerLimits.keepAliveIdleTimeoutMilliseconds), [.close])
        XCTAssertEqual(machine.bytesReceived(get, nowMilliseconds: 1), [], "no dispatch after close")
        XCTAssertTrue(machine.isClosed)
    }

    func testBytesAfterThePeerClosedCloseTheConnection() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, assertsOnInvariantViolation: false)
        XCTAssertEqual(dispatched(machine.bytesReceived(get, nowMilliseconds: 1)).count, 1)
        XCTAssertEqual(machine.peerClosed(nowMilliseconds: 2), [.cancelInFlight])
        XCTAssertEqual(machine.bytesReceived(get, nowMilliseconds: 3), [.close])
        XCTAssertTrue(machine.isClosed)
    }

    func testBytesAfterAParseErrorCloseTheConnection() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, assertsOnInvariantViolation: false)
        XCTAssertEqual(
            dispatched(
                machine.bytesReceived(get + Array("GET / HTTP/1.1\r\nHost : a\r\n\r\n".utf8), nowMilliseconds: 1)
            ).count, 1)
        XCTAssertFalse(machine.wantsRead, "the parser failed")
        XCTAssertEqual(machine.bytesReceived(get, nowMilliseconds: 2), [.close])
        XCTAssertTrue(machine.isClosed)
    }

    func testResponseWrittenWithNothingInFlightClosesTheConnection() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, assertsOnInvariantViolation: false)
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 1), [.close])
        XCTAssertTrue(machine.isClosed)
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 2), [])
    }

    func testPeerClosedTwiceClosesTheConnection() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0, assertsOnInvariantViolation: false)
        _ = machine.bytesReceived(get + get, nowMilliseconds: 0)
        XCTAssertEqual(machine.peerClosed(nowMilliseconds: 1), [.cancelInFlight], "the queued request is dropped")
        XCTAssertEqual(machine.peerClosed(nowMilliseconds: 2), [.close])
        XCTAssertTrue(machine.isClosed)
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 3), [])
    }

    func testTimersAreNeverAViolation() {
        var machine = HTTPConnectionStateMachine(nowMilliseconds: 0)
        _ = machine.bytesReceived(get, nowMilliseconds: 0)
        XCTAssertEqual(machine.timerFired(nowMilliseconds: 1_000_000), [], "no deadline while in flight")
        XCTAssertEqual(machine.responseWritten(nowMilliseconds: 1), [])
        XCTAssertEqual(
            machine.timerFired(nowMilliseconds: 1 + HTTPServerLimits.keepAliveIdleTimeoutMilliseconds), [.close])
        XCTAssertEqual(
            machine.timerFired(nowMilliseconds: 2 + HTTPServerLimits.keepAliveIdleTimeoutMilliseconds), [],
            "late, after closing")
    }
}
