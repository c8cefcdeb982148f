/// Every limit of the RPC runtime, in one place (TIGER_STYLE: a named maximum
/// for every queue, buffer, message and connection count).
public struct RPCLimits: Sendable, Hashable {
    /// Largest message accepted or sent, in bytes (gRPC's default is 4 MiB).
    public var messageSizeBytesMax: Int = 4 * 1024 * 1024
    /// HTTP/2 SETTINGS_INITIAL_WINDOW_SIZE advertised for each stream.
    public var streamWindowBytes: Int = 1024 * 1024
    /// The connection-level receive window.
    public var connectionWindowBytes: Int = 16 * 1024 * 1024
    /// SETTINGS_MAX_CONCURRENT_STREAMS advertised to peers.
    public var concurrentStreamsMax: Int = 1000
    /// Open connections a server keeps; further accepts are closed at once.
    public var connectionsMax: Int = 4096
    /// Total size of request header fields accepted, in bytes.
    public var headerListBytesMax: Int = 16 * 1024
    /// Bytes read from a socket per read call.
    public var readChunkBytes: Int = 64 * 1024
    /// Request bytes one server connection holds, over all its streams,
    /// that no handler has taken yet (a message still arriving, or complete
    /// and waiting for END_STREAM). nghttp2 returns the flow-control window
    /// as soon as it hands us DATA, so without this a peer could park
    /// `messageSizeBytesMax` on each of `concurrentStreamsMax` streams (~4 GiB)
    /// for as long as it likes (calls need no grpc-timeout). A stream whose
    /// DATA would pass it is answered RESOURCE_EXHAUSTED and reset, which
    /// frees its bytes. 16 MiB: four largest messages arriving at once on
    /// one connection, while the services' requests are a few KiB (a
    /// StoreKit 1 receipt, the largest, under 1 MiB). Never below
    /// `messageSizeBytesMax` plus a length prefix, so one largest message
    /// always fits (a smaller value is raised to that).
    public var requestBytesBufferedPerConnectionMax: Int = 16 * 1024 * 1024
    /// Longest deadline we honour; larger grpc-timeout values are clamped.
    public var deadlineMax: Duration = .seconds(24 * 60 * 60)

    /// Server side: how long a new connection has to finish its TLS
    /// handshake (if any) and send the HTTP/2 preface and SETTINGS before it
    /// is closed. Sockets that send nothing would otherwise hold their
    /// places among `connectionsMax` for ever and lock every later client
    /// out. 10 s leaves a slow network's handshake several round trips.
    public var handshakeTimeout: Duration = .seconds(10)
    /// Server side: a connection with no open stream for this long gets
    /// GOAWAY and is closed (gRPC's MAX_CONNECTION_IDLE); clients reconnect
    /// for their next call. 5 minutes: longer than a balancer's health
    /// interval and any quiet spell between a service's calls, short enough
    /// that forgotten connections give back their places.
    public var idleTimeout: Duration = .seconds(300)

    /// After a finished session is half-closed, how long to wait for the
    /// peer to hang up before closing the socket.
    public var closeLinger: Duration = .milliseconds(500)
    /// Delay between a graceful shutdown's GOAWAY notice and the final GOAWAY.
    public var goAwayNotice: Duration = .milliseconds(50)

    /// Rapid-reset defence (CVE-2023-44487), enforced by nghttp2: a
    /// connection may reset this many streams in a burst, refilled at
    /// `streamResetRefillPerSecond`; beyond it the session ends with GOAWAY.
    public var streamResetBurstMax: Int = 1000
    public var streamResetRefillPerSecond: Int = 33

    public init() {}

    public static let `default` = RPCLimits()
}
