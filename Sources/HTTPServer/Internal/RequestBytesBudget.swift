/// The request bytes all connections of one `HTTPServer` hold at once
/// (HTTP/1.1 read buffers, partial, queued and in-flight bodies; HTTP/2
/// request header lists, counted as decoded, and bodies), against one bound:
/// `HTTPServer.Configuration.requestBytesBufferedMax`. Per-path body limits
/// bound one request; without this, many connections each sending a body
/// under its limit, and stalling, could hold more than the process may use
/// (bodies are read whole before the handler runs; only what the responder
/// refuses from the head, `HTTPResponder.refuseBeforeBody`, holds none).
/// Loop-confined (hence `@unchecked Sendable`: the HTTP/2 stream factory
/// that captures it is `@Sendable`, but every holder runs on the server's loop).
final class RequestBytesBudget: @unchecked Sendable {
    let bytesMax: Int
    private(set) var bytesHeld = 0

    init(bytesMax: Int) {
        precondition(bytesMax > 0, "RequestBytesBudget: a bound above zero")
        self.bytesMax = bytesMax
    }

    /// A holder's bytes go from `old` to `new`. An increase that does not
    /// fit changes nothing and answers false; a decrease always applies.
    func resize(from old: Int, to new: Int) -> Bool {
        let increase = new - old
        if increase > 0 && increase > bytesMax - bytesHeld { return false }
        bytesHeld += increase
        assert(bytesHeld >= 0, "RequestBytesBudget: released more than held")
        return true
    }
}
