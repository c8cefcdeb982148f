import RPCRuntime

/// The convention every service follows for machine-readable failure
/// reasons: the trailer `error-reason` carries a stable name such as
/// `STARTER_PACK_INELIGIBLE` (listed in each proto's header comment).
public enum ErrorReason {
    /// The trailer key.
    public static let metadataKey = "error-reason"

    /// An `RPCError` carrying `reason` in its trailers.
    public static func error(code: RPCError.Code, reason: String, message: String, extra: [(String, String)] = []) -> RPCError {
        var metadata = Metadata()
        metadata.addString(reason, forKey: metadataKey)
        for (key, value) in extra { metadata.addString(value, forKey: key) }
        return RPCError(code: code, message: message, metadata: metadata)
    }

    /// The reason a received error carries, if any.
    public static func reason(of error: RPCError) -> String? {
        error.metadata[stringValues: metadataKey].first
    }
}

extension ProtobufError: RPCErrorConvertible {
    /// Bytes a caller sent that do not decode are the caller's fault
    /// (INVALID_ARGUMENT); a schema mismatch is ours (INTERNAL).
    public var rpcError: RPCError {
        switch kind {
        case .malformedWire, .invalidUTF8, .embeddedNUL, .tooDeep:
            return ErrorReason.error(code: .invalidArgument, reason: "VALIDATION_FAILED", message: "request message: \(detail)")
        case .schemaMismatch:
            return RPCError(code: .internal, message: "internal error", cause: self)
        }
    }
}
