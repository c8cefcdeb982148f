extension RPCError.Code {
    /// Maps an HTTP status received instead of a gRPC response to a gRPC code,
    /// per gRPC's `http-grpc-status-mapping.md`.
    public init(httpStatus: Int) {
        switch httpStatus {
        case 400: self = .internal
        case 401: self = .unauthenticated
        case 403: self = .permissionDenied
        case 404: self = .unimplemented
        case 429, 502, 503, 504: self = .unavailable
        default: self = .unknown
        }
    }
}
