/// The request bytes one connection holds for its streams before their
/// handlers take them, against one bound for the whole connection
/// (`RPCLimits.requestBytesBufferedPerConnectionMax`). Pure: the connection
/// admits each DATA chunk here before handing it on, and releases a
/// stream's bytes once its delegate let go of them or the stream closed.
public struct BufferedBytesBudget: Sendable {
    /// Most bytes held at once, over all streams.
    public let bytesMax: Int
    /// Bytes held now: always the sum of every stream's.
    public private(set) var bytesHeld = 0
    private var bytesHeldByStream: [Int32: Int] = [:]

    /// `bytesMax` is raised to `bytesMin` (one largest message and its
    /// prefix), so a lone stream can always receive a legal message.
    public init(bytesMax: Int, bytesMin: Int = 0) {
        precondition(bytesMax >= 0 && bytesMin >= 0, "BufferedBytesBudget: negative bound")
        self.bytesMax = max(bytesMax, bytesMin)
    }

    /// Counts `count` more bytes for `stream`. False when they would pass
    /// `bytesMax`: then nothing is counted, and the stream must be answered
    /// and its bytes released.
    public mutating func admit(_ count: Int, stream: Int32) -> Bool {
        precondition(count >= 0, "BufferedBytesBudget: negative byte count")
        guard count <= bytesMax - bytesHeld else { return false }
        guard count > 0 else { return true }
        bytesHeld += count
        bytesHeldByStream[stream, default: 0] += count
        return true
    }

    /// The stream's bytes were handed on or dropped: they count no more.
    /// Nothing happens for a stream holding none.
    public mutating func release(stream: Int32) {
        guard let count = bytesHeldByStream.removeValue(forKey: stream) else { return }
        bytesHeld -= count
        assert(
            bytesHeld >= 0 && (bytesHeld > 0 || bytesHeldByStream.isEmpty), "BufferedBytesBudget: books out of balance")
    }

    /// Bytes `stream` holds now.
    public func bytesHeld(stream: Int32) -> Int { bytesHeldByStream[stream] ?? 0 }

    /// Streams holding bytes now.
    public var streamsHoldingBytes: Int { bytesHeldByStream.count }
}
