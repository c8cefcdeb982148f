/// HTTP/2 error codes the runtime refers to by name.
public enum HTTP2ErrorCodes {
    /// Not an HTTP/2 code: the whole connection went away under the stream.
    public static let connectionClosed: UInt32 = 0xFFFF_FFFF
}
