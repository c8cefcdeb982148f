// RPCBenchServer: testing.v1.Echo/Unary on RPCRuntime with protobuf-c
// (CContracts' generated code) as the message codec, the configuration that
// matches the C++ baseline (runtime + generated protobuf code). The product's
// EchoServer goes through Contracts' Codable bridge instead; bench/rpc/run.sh
// measures both, so the runtime's and the codec's shares are visible.
// Echoes message and payload, honours fail_with_code/fail_with_message and
// delay_ms, reports deadline_remaining_ms; echo_metadata_keys is not served.
// Usage: RPCBenchServer --listen HOST:PORT (port 0 = any). Prints
// "listening on HOST:PORT"; runs until terminated.
import CContracts
import Foundation
import RPCCore
import RPCRuntime

/// One unpacked EchoRequest; the only owner of protobuf-c's allocation.
final class UnpackedEchoRequest {
    private let pointer: UnsafeMutablePointer<Testing__V1__EchoRequest>

    init(_ bytes: [UInt8]) throws {
        let unpacked = bytes.withUnsafeBufferPointer { buffer in
            testing__v1__echo_request__unpack(nil, buffer.count, buffer.baseAddress)
        }
        guard let unpacked else { throw RPCError(code: .invalidArgument, message: "Malformed EchoRequest") }
        pointer = unpacked
    }

    deinit { testing__v1__echo_request__free_unpacked(pointer, nil) }

    var delayMilliseconds: Int64 { pointer.pointee.delay_ms }
    var failCode: Int32 { pointer.pointee.fail_with_code }
    var failMessage: String { pointer.pointee.fail_with_message.map { String(cString: $0) } ?? "" }

    /// The serialized EchoResponse carrying this request's message and payload.
    func responseBytes(deadlineRemainingMilliseconds: Int64) -> [UInt8] {
        var response = Testing__V1__EchoResponse()
        testing__v1__echo_response__init(&response)
        // Borrowed from the request, which outlives this call.
        response.message = pointer.pointee.message
        response.payload = pointer.pointee.payload
        response.deadline_remaining_ms = deadlineRemainingMilliseconds
        let size = testing__v1__echo_response__get_packed_size(&response)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = testing__v1__echo_response__pack(&response, buffer.baseAddress)
        }
    }
}

func remainingMilliseconds(until deadline: ContinuousClock.Instant?) -> Int64 {
    guard let deadline else { return -1 }
    let (seconds, attoseconds) = ContinuousClock.now.duration(to: deadline).components
    return max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
}

var listen = HostAndPort(host: "127.0.0.1", port: 0)
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.count == 2, arguments[0] == "--listen", let colon = arguments[1].lastIndex(of: ":"),
    let port = Int(arguments[1][arguments[1].index(after: colon)...])
{
    listen = HostAndPort(host: String(arguments[1][..<colon]), port: port)
} else if !arguments.isEmpty {
    FileHandle.standardError.write(Data("usage: RPCBenchServer --listen HOST:PORT\n".utf8))
    exit(2)
}

var router = Router()
router.registerRaw(MethodDescriptor(service: "testing.v1.Echo", method: "Unary")) { raw in
    let request = try UnpackedEchoRequest(raw.message)
    if request.delayMilliseconds > 0 {
        try await Task.sleep(for: .milliseconds(min(request.delayMilliseconds, 60_000)))
    }
    if request.failCode != 0 {
        throw RPCError(code: RPCError.Code(rawValue: Int(request.failCode)), message: request.failMessage)
    }
    let bytes = request.responseBytes(deadlineRemainingMilliseconds: remainingMilliseconds(until: raw.context.deadline))
    return ServerResponse(message: bytes, metadata: [:], trailingMetadata: [:])
}
let server = RPCServer(configuration: .init(listen: .init(host: listen.host, port: listen.port)), router: router)
do {
    let port = try server.start()
    FileHandle.standardOutput.write(Data("listening on \(listen.host):\(port)\n".utf8))
} catch {
    FileHandle.standardError.write(Data("RPCBenchServer: \(error)\n".utf8))
    exit(1)
}
while true { try await Task.sleep(for: .seconds(3600)) }
