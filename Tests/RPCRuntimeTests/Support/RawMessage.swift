import RPCCore

/// A test-only message that is its own bytes.
struct RawMessage: RPCMessage, Equatable {
    var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }
    init(_ text: String) { self.bytes = Array(text.utf8) }
    init(serializedBytes: [UInt8]) throws { self.bytes = serializedBytes }
    func serializedBytes() throws -> [UInt8] { bytes }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// A domain error choosing its own status, as services' errors will.
struct InsufficientCredits: RPCErrorConvertible {
    var rpcError: RPCError { RPCError(code: .failedPrecondition, message: "Not enough credits") }
}

struct SecretFailure: Error {
    let detail = "database password is hunter2"
}
