/// Reads gRPC's length-prefixed messages from arbitrarily split chunks.
/// A pure state machine: feed bytes, then pull complete messages.
public struct MessageDeframer: Sendable {
    /// Why the byte stream could not be read as messages.
    public enum Failure: Error, Equatable, Sendable {
        /// A length prefix announced more bytes than `messageSizeBytesMax`.
        case messageTooLarge(announcedBytes: Int)
        /// The compressed flag was set; we only speak identity.
        case compressedMessage
        /// The flag byte was neither 0 nor 1.
        case invalidFlag(UInt8)
        /// The stream ended in the middle of a prefix or a message.
        case truncated(bufferedBytes: Int)
    }

    private enum State: Sendable {
        case awaitingPrefix
        case awaitingBody(length: Int)
        case failed(Failure)
    }

    public let messageSizeBytesMax: Int
    private var state: State = .awaitingPrefix
    private var buffer: [UInt8] = []
    private var readIndex = 0

    public init(messageSizeBytesMax: Int) {
        self.messageSizeBytesMax = messageSizeBytesMax
    }

    /// Buffers more bytes from the stream.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, nil when more bytes are needed.
    public mutating func next() throws(Failure) -> [UInt8]? {
        while true {
            switch state {
            case .failed(let failure):
                throw failure
            case .awaitingPrefix:
                guard buffer.count - readIndex >= MessageFramer.prefixBytes else { return nil }
                let flag = buffer[readIndex]
                let length =
                    Int(buffer[readIndex + 1]) << 24 | Int(buffer[readIndex + 2]) << 16
                    | Int(buffer[readIndex + 3]) << 8 | Int(buffer[readIndex + 4])
                if flag == 1 { return try fail(.compressedMessage) }
                if flag != 0 { return try fail(.invalidFlag(flag)) }
                if length > messageSizeBytesMax { return try fail(.messageTooLarge(announcedBytes: length)) }
                readIndex += MessageFramer.prefixBytes
                state = .awaitingBody(length: length)
            case .awaitingBody(let length):
                guard buffer.count - readIndex >= length else { return nil }
                let message = Array(buffer[readIndex..<readIndex + length])
                readIndex += length
                compact()
                state = .awaitingPrefix
                return message
            }
        }
    }

    /// True once a length prefix was read whose message has not fully
    /// arrived: a unary server refuses a second message at this point,
    /// before buffering its body.
    public var awaitsMessageBody: Bool {
        if case .awaitingBody = state { return true }
        return false
    }

    /// Called when the peer ended the stream: fails if bytes are left over,
    /// or if a length prefix was read whose message never came (even when
    /// none of its bytes did: the prefix alone is an unfinished message).
    public func finish() throws(Failure) {
        let buffered = buffer.count - readIndex
        switch state {
        case .failed(let failure): throw failure
        case .awaitingBody: throw .truncated(bufferedBytes: buffered)
        case .awaitingPrefix: if buffered > 0 { throw .truncated(bufferedBytes: buffered) }
        }
    }

    private mutating func fail(_ failure: Failure) throws(Failure) -> [UInt8]? {
        state = .failed(failure)
        buffer = []
        readIndex = 0
        throw failure
    }

    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 64 * 1024 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}
