/// A gRPC status failure: a code, a human readable message, trailing metadata
/// and, for local diagnostics only, the underlying cause (never sent on the wire).
public struct RPCError: Error, Sendable, CustomStringConvertible {
    /// A gRPC status code. A struct of `static let`s rather than an enum so
    /// that codes received from peers that this build does not know survive.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The numeric value carried in `grpc-status`.
        public let rawValue: Int

        public init(rawValue: Int) { self.rawValue = rawValue }

        public static let ok = Code(rawValue: 0)
        public static let cancelled = Code(rawValue: 1)
        public static let unknown = Code(rawValue: 2)
        public static let invalidArgument = Code(rawValue: 3)
        public static let deadlineExceeded = Code(rawValue: 4)
        public static let notFound = Code(rawValue: 5)
        public static let alreadyExists = Code(rawValue: 6)
        public static let permissionDenied = Code(rawValue: 7)
        public static let resourceExhausted = Code(rawValue: 8)
        public static let failedPrecondition = Code(rawValue: 9)
        public static let aborted = Code(rawValue: 10)
        public static let outOfRange = Code(rawValue: 11)
        public static let unimplemented = Code(rawValue: 12)
        public static let `internal` = Code(rawValue: 13)
        public static let unavailable = Code(rawValue: 14)
        public static let dataLoss = Code(rawValue: 15)
        public static let unauthenticated = Code(rawValue: 16)

        /// All seventeen codes defined by gRPC, in numeric order.
        public static let all: [Code] = (0...16).map { Code(rawValue: $0) }

        public var description: String {
            let names = [
                "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                "UNAUTHENTICATED",
            ]
            return names.indices.contains(rawValue) ? names[rawValue] : "CODE_\(rawValue)"
        }
    }

    public var code: Code
    public var message: String
    public var metadata: Metadata
    /// The local error that led to this one; for logs, never put on the wire.
    public var cause: (any Error)?

    public init(code: Code, message: String, metadata: Metadata = [:], cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.metadata = metadata
        self.cause = cause
    }

    public var description: String { "\(code): \(message)" }
}

extension RPCError {
    /// The single place that turns any error thrown by a handler into a
    /// status. Errors that do not choose a code become UNKNOWN with a generic
    /// message so that internal details never leak to callers.
    public static func from(_ error: any Error) -> RPCError {
        if let convertible = error as? any RPCErrorConvertible { return convertible.rpcError }
        if error is CancellationError { return RPCError(code: .cancelled, message: "Call cancelled", cause: error) }
        return RPCError(code: .unknown, message: "Internal server error", cause: error)
    }
}
