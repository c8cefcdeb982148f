@testable import RPCCore
import XCTest

final class ClientResponseStateMachineTests: XCTestCase {
    private let responseHeaders = [
        HTTPHeaderField(name: ":status", value: "200"),
        HTTPHeaderField(name: "content-type", value: "application/grpc"),
        HTTPHeaderField(name: "x-initial", value: "i"),
    ]

    private func machine() -> ClientResponseStateMachine { ClientResponseStateMachine(messageSizeBytesMax: 1024) }

    func testHeadersDataTrailersWhenAwaitingHeadersSucceeds() throws {
        var machine = machine()
        machine.receiveHeaders(responseHeaders, endStream: false)
        machine.receiveData(MessageFramer.frame([7, 8]), endStream: false)
        machine.receiveHeaders(
            [HTTPHeaderField(name: "grpc-status", value: "0"), HTTPHeaderField(name: "x-t", value: "t")],
            endStream: true)
        let response = try machine.result?.get()
        XCTAssertEqual(response?.message, [7, 8])
        XCTAssertEqual(response?.metadata[stringValues: "x-initial"], ["i"])
        XCTAssertEqual(response?.trailingMetadata[stringValues: "x-t"], ["t"])
    }

    func testTrailersOnlyWhenAwaitingHeadersFailsWithStatusAndDecodedMessage() {
        var machine = machine()
        machine.receiveHeaders(
            [
                HTTPHeaderField(name: ":status", value: "200"),
                HTTPHeaderField(name: "content-type", value: "application/grpc"),
                HTTPHeaderField(name: "grpc-status", value: "7"),
                HTTPHeaderField(name: "grpc-message", value: "no %E2%9C%93"),
                HTTPHeaderField(name: "x-why", value: "policy"),
            ], endStream: true)
        guard case .failure(let error) = machine.result else { return XCTFail() }
        XCTAssertEqual(error.code, .permissionDenied)
        XCTAssertEqual(error.message, "no ✓")
        XCTAssertEqual(error.metadata[stringValues: "x-why"], ["policy"])
    }

    func testHTTPErrorStatusWhenAwaitingHeadersMapsToGRPCCode() {
        for (http, code) in [
            (400, RPCError.Code.internal), (401, .unauthenticated), (403, .permissionDenied), (404, .unimplemented),
            (429, .unavailable), (502, .unavailable), (503, .unavailable), (504, .unavailable), (500, .unknown),
        ] {
            var machine = machine()
            machine.receiveHeaders([HTTPHeaderField(name: ":status", value: String(http))], endStream: true)
            guard case .failure(let error) = machine.result else { return XCTFail() }
            XCTAssertEqual(error.code, code, "HTTP \(http)")
        }
    }

    func testWrongContentTypeWhenAwaitingHeadersFailsUnknown() {
        var machine = machine()
        machine.receiveHeaders(
            [
                HTTPHeaderField(name: ":status", value: "200"),
                HTTPHeaderField(name: "content-type", value: "text/html"),
            ], endStream: false)
        guard case .failure(let error) = machine.result else { return XCTFail() }
        XCTAssertEqual(error.code, .unknown)
    }

    func testOkWithoutMessageWhenReceivingMessageFailsInternal() {
        var machine = machine()
        machine.receiveHeaders(responseHeaders, endStream: false)
        machine.receiveHeaders([HTTPHeaderField(name: "grpc-status", value: "0")], endStream: true)
        guard case .failure(let error) = machine.result else { return XCTFail() }
        XCTAssertEqual(error.code, .internal)
    }

    func testOversizedMessageWhenReceivingMessageFailsResourceExhausted() {
        var machine = machine()
        machine.receiveHeaders(responseHeaders, endStream: false)
        machine.receiveData([0, 0, 0, 8, 0], endStream: false)
        guard case .failure(let error) = machine.result else { return XCTFail() }
        XCTAssertEqual(error.code, .resourceExhausted)
    }

    func testMissingStatusInTrailersWhenReceivingMessageFailsInternal() {
        var machine = machine()
        machine.receiveHeaders(responseHeaders, endStream: false)
        machine.receiveData(MessageFramer.frame([1]), endStream: false)
        machine.receiveHeaders([HTTPHeaderField(name: "x-no-status", value: "1")], endStream: true)
        guard case .failure(let error) = machine.result else { return XCTFail() }
        XCTAssertEqual(error.code, .internal)
    }

    func testStreamResetWhenReceivingMessageMapsResetCode() {
        for (reset, code) in [
            (UInt32(0x7), RPCError.Code.unavailable), (0x8, .cancelled), (0xB, .resourceExhausted), (0x2, .internal),
            (HTTP2ErrorCodes.connectionClosed, .unavailable),
        ] {
            var machine = machine()
            machine.receiveHeaders(responseHeaders, endStream: false)
            machine.streamClosed(errorCode: reset)
            guard case .failure(let error) = machine.result else { return XCTFail() }
            XCTAssertEqual(error.code, code, "reset \(reset)")
        }
    }

    func testLocalFailureWhenFinishedIsIgnored() throws {
        var machine = machine()
        machine.receiveHeaders(responseHeaders, endStream: false)
        machine.receiveData(MessageFramer.frame([1]), endStream: false)
        machine.receiveHeaders([HTTPHeaderField(name: "grpc-status", value: "0")], endStream: true)
        machine.fail(RPCError(code: .deadlineExceeded, message: "late"))
        machine.streamClosed(errorCode: 0)
        XCTAssertEqual(try machine.result?.get().message, [1])
    }

    func testReceiveDataWhenAwaitingHeadersIsAnInvariantViolation() {
        var machine = ClientResponseStateMachine(messageSizeBytesMax: 1024, assertsOnInvariantViolation: false)
        machine.receiveData(MessageFramer.frame([1]), endStream: false)
        guard case .failure(let error)? = machine.result else { return XCTFail("the call must fail") }
        XCTAssertEqual(error.code, .internal)
    }
}
