import RPCRuntime

/// The one read buffer every connection of a loop reads into: connections
/// are served one at a time on the loop thread and copy what they keep, so
/// 10,000 idle connections hold no read buffers. Loop-confined.
final class SharedReadBuffer {
    private var storage = [UInt8](repeating: 0, count: HTTPServerLimits.readChunkBytes)

    /// Reads once from `socket`; `body` sees the bytes read (valid only
    /// inside `body`) when there were any.
    func read(from socket: ConnectedSocket, _ body: (ArraySlice<UInt8>) -> Void) -> ConnectedSocket.ReadOutcome {
        let outcome = storage.withUnsafeMutableBytes { socket.read(into: $0) }
        if case .bytes(let count) = outcome { body(storage[0..<count]) }
        return outcome
    }
}
