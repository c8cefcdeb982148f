import RPCCore

/// A transport that first yields bytes already read from the socket by a
/// previous owner (an adopted connection's sniffed preface), then reads the
/// socket through `base`.
final class PrefixedTransport: ByteTransport {
    private var prefix: [UInt8]
    private var prefixIndex = 0
    private let base: any ByteTransport

    init(prefix: [UInt8], base: any ByteTransport) {
        self.prefix = prefix
        self.base = base
    }

    /// True while some of the prefix is still unread.
    var hasBufferedBytes: Bool { prefixIndex < prefix.count }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportRead {
        servedFromPrefix = hasBufferedBytes
        guard servedFromPrefix else { return base.read(into: buffer) }
        let count = min(buffer.count, prefix.count - prefixIndex)
        prefix.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[prefixIndex..<(prefixIndex + count)]))
        }
        prefixIndex += count
        if !hasBufferedBytes { prefix = [] }
        return .bytes(count)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportWrite { base.write(bytes) }
    var needsWritable: Bool { base.needsWritable }
    var negotiatedProtocol: String? { base.negotiatedProtocol }
    var peerIdentity: PeerIdentity? { base.peerIdentity }
    /// Bytes from the prefix say nothing of the socket.
    var lastReadDrainedSocket: Bool { !servedFromPrefix && base.lastReadDrainedSocket }
    private var servedFromPrefix = false
}
