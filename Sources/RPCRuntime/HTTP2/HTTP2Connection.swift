#if canImport(Glibc)
import Glibc
#endif
import CNGHTTP2
import RPCCore

/// One HTTP/2 connection (server or client side) driven by nghttp2 through
/// `mem_recv`/`mem_send` on its event loop's thread. The only type that
/// touches nghttp2. Generic: it hands streams with headers and body to
/// delegates and sends headers, data and trailers, so both the gRPC runtime
/// and the Gateway's JSON API can use it.
public final class HTTP2Connection {
    /// Which side of the connection we are.
    public enum Role: Sendable { case server, client }

    public let role: Role
    public let loop: EventLoop
    public let remotePeer: String
    let limits: RPCLimits

    /// Server side: called for each new request stream; return its delegate.
    public var onNewStream: ((HTTP2Stream) -> any HTTP2StreamDelegate)?
    /// Called once when the connection is closed (after every stream closed).
    public var onClose: (() -> Void)?
    /// Client side: this connection takes no new streams, as after the
    /// peer's GOAWAY: the peer sent one, or our stream ids ran out (then we
    /// sent GOAWAY ourselves). Streams already open finish; open new ones on
    /// another connection. Called at most once.
    public var onGoAway: (() -> Void)?

    private let fd: Int32
    private let transport: any ByteTransport
    /// The TLS session under `transport`, if any: a finished session sends
    /// its close_notify before the socket is half-closed.
    private let tlsSession: TLSTransport?
    private var session: OpaquePointer?
    private var streams: [Int32: HTTP2Stream] = [:]
    private var readBuffer: [UInt8]
    private var writeBuffer: [UInt8] = []
    private var writeIndex = 0
    private var watchingWritable = false
    private var inSessionCall = false
    /// Inside `batchingWrites`: flushes wait until the batch ends.
    private var writesBatched = false
    /// Inside `handle`'s reads: off-loop work waits in `offLoopWork`.
    private var readingInput = false
    private var offLoopWork: [@Sendable () -> Void] = []
    private var closeRequested = false
    public private(set) var isClosed = false
    public private(set) var receivedGoAway = false
    /// Client side: nghttp2 has no stream id left (2^31 - 1 is the last).
    public private(set) var streamIDsExhausted = false
    private var shutdownTimer: EventLoop.TimerID?
    /// Server side: request bytes handed to stream delegates and not yet
    /// released by them, bounded per connection.
    private var bufferedBytes: BufferedBytesBudget
    private var lingerTimer: EventLoop.TimerID?
    /// Server side: closes the connection unless the peer's SETTINGS (after
    /// the preface, and the TLS handshake if any) arrive in time.
    private var handshakeTimer: EventLoop.TimerID?
    /// The peer's first SETTINGS arrived (after the preface, and the TLS
    /// handshake if any): the connection is established.
    public private(set) var peerSettingsReceived = false
    /// Called once, when the peer's first SETTINGS arrive (either role).
    public var onPeerSettings: (() -> Void)?
    /// Server side: one timer per connection, moved only when it fires (not
    /// per stream), GOAWAY once no stream was open for `limits.idleTimeout`.
    private var idleTimer: EventLoop.TimerID?
    /// Server side: when the last stream closed; nil while streams are open.
    private var idleSince: ContinuousClock.Instant?
    /// Server side: how long a response may take to leave, from its
    /// submission until its last frame is serialized and every serialized
    /// byte is taken by the socket (nil: no bound). Past it the peer is
    /// holding the connection without reading (a zero flow-control window,
    /// or no reads at all), and the connection gets GOAWAY and is closed.
    let responseWriteTimeout: Duration?
    /// One timer per connection while a response is pending, moved only
    /// when it fires (to the oldest pending response's deadline).
    private var writeProgressTimer: EventLoop.TimerID?
    /// Since when `writeBuffer` has held bytes the socket would not take;
    /// nil once it drained.
    private var writeStalledSince: ContinuousClock.Instant?
    /// Server side: streams reset before our answer was out, bounded as
    /// nghttp2 bounds the RST_STREAM frames it receives
    /// (`limits.streamResetBurstMax`, refilled at `streamResetRefillPerSecond`).
    private var resetBudget: StreamResetBudget
    /// The reset budget ran out inside an nghttp2 callback; the session is
    /// terminated once the call returns.
    private var resetBudgetExhausted = false
    private var terminatedForResets = false
    /// Work posted from other threads, run on the loop in batches.
    private(set) lazy var mailbox = ConnectionMailbox(connection: self, loop: loop)

    /// Reads per readiness event before yielding to other connections.
    private static let readsPerEventMax = 16
    /// Room reserved for a header block's fields up front (a gRPC request
    /// carries about eight); more still fit, the array just grows.
    private static let headerFieldsExpected = 12
    /// Serialized frames gathered before one write call.
    private static let writeBatchBytes = 64 * 1024

    /// Wraps a connected non-blocking socket; takes ownership of `fd`.
    /// `tlsSession`: the TLS session under `transport` when that wraps it
    /// (an adopted connection's `PrefixedTransport`); a `TLSTransport`
    /// passed as `transport` itself is found without it.
    init(
        loop: EventLoop, fd: Int32, transport: any ByteTransport, role: Role, remotePeer: String, limits: RPCLimits,
        responseWriteTimeout: Duration? = nil, tlsSession: TLSTransport? = nil
    ) throws {
        loop.assertInEventLoop()
        precondition(responseWriteTimeout.map { $0 > .zero } ?? true, "a response write timeout above zero")
        precondition(responseWriteTimeout == nil || role == .server, "a response write timeout is for servers")
        self.responseWriteTimeout = responseWriteTimeout
        self.loop = loop
        self.fd = fd
        self.transport = transport
        self.tlsSession = tlsSession ?? (transport as? TLSTransport)
        self.role = role
        self.remotePeer = remotePeer
        self.limits = limits
        self.readBuffer = [UInt8](repeating: 0, count: limits.readChunkBytes)
        self.bufferedBytes = BufferedBytesBudget(
            bytesMax: limits.requestBytesBufferedPerConnectionMax,
            bytesMin: limits.messageSizeBytesMax + MessageFramer.prefixBytes)
        self.resetBudget = StreamResetBudget(
            burstMax: limits.streamResetBurstMax, refillPerSecond: limits.streamResetRefillPerSecond, now: .now)
        try makeSession()
    }

    deinit {
        // Delegates may hold their stream strongly; break those links.
        for stream in streams.values { stream.delegate = nil }
        if let session { nghttp2_session_del(session) }
        if !isClosed { Glibc.close(fd) }
    }

    /// Number of open streams.
    public var activeStreamCount: Int { streams.count }

    /// Client side: whether `startRequest` may still open a stream here.
    /// False after the peer's GOAWAY, once the stream ids ran out, or when closed.
    public var acceptsNewStreams: Bool { !isClosed && !receivedGoAway && !streamIDsExhausted }

    /// The peer's verified client certificate names (a TLS server with a
    /// client CA); nil otherwise, and before the handshake finished.
    public var peerIdentity: PeerIdentity? {
        loop.assertInEventLoop()
        return transport.peerIdentity
    }

    // MARK: Setup

    private func makeSession() throws {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw SystemError(call: "nghttp2_session_callbacks_new", errorNumber: ENOMEM)
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeadersCallback)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeaderCallback)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameRecvCallback)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunkRecvCallback)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamCloseCallback)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSendCallback)

        var options: OpaquePointer?
        guard nghttp2_option_new(&options) == 0, let options else {
            throw SystemError(call: "nghttp2_option_new", errorNumber: ENOMEM)
        }
        defer { nghttp2_option_del(options) }
        nghttp2_option_set_max_send_header_block_length(options, limits.headerListBytesMax * 4)
        nghttp2_option_set_stream_reset_rate_limit(
            options, UInt64(limits.streamResetBurstMax), UInt64(limits.streamResetRefillPerSecond))

        // The session never outlives this object (deleted in close/deinit),
        // so an unretained pointer is safe as nghttp2's user data.
        let context = Unmanaged.passUnretained(self).toOpaque()
        var created: OpaquePointer?
        let result: Int32
        switch role {
        case .server: result = nghttp2_session_server_new2(&created, callbacks, context, options)
        case .client: result = nghttp2_session_client_new2(&created, callbacks, context, options)
        }
        guard result == 0, let created else {
            throw SystemError(call: "nghttp2_session_new", errorNumber: ENOMEM)
        }
        session = created

        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: UInt32(limits.concurrentStreamsMax)),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                value: UInt32(limits.streamWindowBytes)),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(limits.headerListBytesMax)),
        ]
        if role == .client {
            settings.append(nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0))
        }
        nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count)
        nghttp2_session_set_local_window_size(
            created, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(limits.connectionWindowBytes))
    }

    /// Starts reading and sends our SETTINGS (and, as client, the preface).
    func start() throws {
        loop.assertInEventLoop()
        try loop.register(fd: fd, events: .readable) { [weak self] events in
            self?.handle(events)
        }
        if role == .server {
            handshakeTimer = loop.schedule(after: limits.handshakeTimeout) { [weak self] in self?.handshakeTimedOut() }
        }
        flush()
    }

    // MARK: Server timers

    private func handshakeTimedOut() {
        handshakeTimer = nil
        guard !isClosed, !peerSettingsReceived else { return }
        close()
    }

    /// The peer's first SETTINGS: the handshake is over, the idle clock starts.
    private func handshakeCompleted() {
        guard !peerSettingsReceived else { return }
        peerSettingsReceived = true
        let onPeerSettings = self.onPeerSettings
        self.onPeerSettings = nil
        onPeerSettings?()
        guard role == .server else { return }
        if let handshakeTimer { loop.cancel(handshakeTimer) }
        handshakeTimer = nil
        let now = ContinuousClock.now
        if streams.isEmpty { idleSince = now }
        armIdleTimer(at: now.advanced(by: limits.idleTimeout))
    }

    /// Starts the write-progress clock unless it runs already: an armed
    /// timer fires no later than any deadline that starts after it.
    private func armWriteProgressTimer(from start: ContinuousClock.Instant) {
        guard let responseWriteTimeout, writeProgressTimer == nil, !isClosed else { return }
        writeProgressTimer = loop.schedule(at: start.advanced(by: responseWriteTimeout)) { [weak self] in
            self?.writeProgressTimerFired()
        }
    }

    /// The oldest write still pending: a submitted response whose last
    /// frame is not serialized yet, or serialized bytes the socket refused.
    private var oldestPendingWrite: ContinuousClock.Instant? {
        var oldest = writeStalledSince
        for stream in streams.values {
            guard let since = stream.responsePendingSince else { continue }
            if oldest.map({ since < $0 }) ?? true { oldest = since }
        }
        return oldest
    }

    /// A pending write older than the timeout: the peer holds its responses
    /// (a zero window, or no reads) and with them the connection, which no
    /// idle timer would ever close. Otherwise the timer moves to the oldest.
    private func writeProgressTimerFired() {
        writeProgressTimer = nil
        guard !isClosed, let responseWriteTimeout, let oldest = oldestPendingWrite else { return }
        let deadline = oldest.advanced(by: responseWriteTimeout)
        guard deadline <= .now else { return armWriteProgressTimer(from: oldest) }
        if let session {
            nghttp2_submit_goaway(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
                nghttp2_session_get_last_proc_stream_id(session), NGHTTP2_ENHANCE_YOUR_CALM.rawValue, nil, 0)
        }
        // Best effort: a peer that does not read will not see it.
        flush()
        close()
    }

    private func armIdleTimer(at deadline: ContinuousClock.Instant) {
        idleTimer = loop.schedule(at: deadline) { [weak self] in self?.idleTimerFired() }
    }

    /// Idle long enough: GOAWAY (notice, then final), and the connection
    /// closes once no stream is left. Otherwise the timer moves to the
    /// earliest moment the connection could have been idle long enough.
    private func idleTimerFired() {
        idleTimer = nil
        guard !isClosed, shutdownTimer == nil else { return }
        let now = ContinuousClock.now
        guard streams.isEmpty, let idleSince else {
            return armIdleTimer(at: now.advanced(by: limits.idleTimeout))
        }
        let idleUntil = idleSince.advanced(by: limits.idleTimeout)
        guard idleUntil <= now else { return armIdleTimer(at: idleUntil) }
        beginGracefulShutdown()
    }

    /// Processes input the transport already holds (an adopted connection's
    /// first bytes), which no readiness event would announce.
    func readBufferedInput() {
        loop.assertInEventLoop()
        handle(.readable)
    }

    // MARK: Streams

    /// Client side: opens a request stream. Returns nil when the session refuses.
    /// When the stream ids run out (after 2^30 requests), the connection
    /// retires itself as a received GOAWAY would: it sends GOAWAY, calls
    /// `onGoAway`, lets its open streams finish and then closes; nothing was
    /// sent for the refused request, so the caller may send it elsewhere.
    public func startRequest(headers: [HTTPHeaderField], body: [UInt8]?, delegate: any HTTP2StreamDelegate)
        -> HTTP2Stream?
    {
        loop.assertInEventLoop()
        guard role == .client, let session, acceptsNewStreams else { return nil }
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: dataReadCallback)
        let id = withNameValues(headers) { nva, count in
            if body == nil { return nghttp2_submit_request(session, nil, nva, count, nil, nil) }
            return nghttp2_submit_request(session, nil, nva, count, &provider, nil)
        }
        if id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue {
            retireForExhaustedStreamIDs()
            return nil
        }
        guard id > 0 else { return nil }
        let stream = HTTP2Stream(id: id, connection: self)
        stream.delegate = delegate
        if let body {
            stream.hasDataProvider = true
            stream.outbound = body
            stream.outboundEnded = true
        }
        streams[id] = stream
        flush()
        return stream
    }

    /// No stream id is left: tell the server we are done (GOAWAY; a client
    /// names last stream 0, as it accepts no pushed streams), so it closes
    /// the connection once the open streams end, and our session, having
    /// sent GOAWAY, stops wanting to read then too (`flush` lingers and closes).
    private func retireForExhaustedStreamIDs() {
        guard let session, !streamIDsExhausted else { return }
        streamIDsExhausted = true
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, NGHTTP2_NO_ERROR.rawValue, nil, 0)
        flushUnlessInSession()
        let onGoAway = self.onGoAway
        self.onGoAway = nil
        onGoAway?()
    }

    /// Tests: the next stream id a client opens (odd, not below the next
    /// one), so a test reaches the end of the id space without 2^30 requests.
    func setNextStreamID(_ id: Int32) {
        loop.assertInEventLoop()
        guard let session else { return }
        let result = nghttp2_session_set_next_stream_id(session, id)
        precondition(result == 0, "nghttp2_session_set_next_stream_id(\(id)) failed: \(result)")
    }

    func sendHeaders(on stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
        loop.assertInEventLoop()
        guard let session, !stream.isClosed, role == .server else { return }
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: dataReadCallback)
        stream.hasDataProvider = !endStream
        let result = withNameValues(headers) { nva, count in
            if endStream { return nghttp2_submit_response(session, stream.id, nva, count, nil) }
            return nghttp2_submit_response(session, stream.id, nva, count, &provider)
        }
        if result != 0 {
            nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, HTTP2Stream.ErrorCode.internalError)
        } else if responseWriteTimeout != nil {
            let now = ContinuousClock.now
            stream.responsePendingSince = now
            armWriteProgressTimer(from: now)
        }
        flushUnlessInSession()
    }

    func sendData(on stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
        loop.assertInEventLoop()
        guard !stream.isClosed, stream.hasDataProvider, !stream.outboundEnded else { return }
        stream.outbound.append(contentsOf: bytes)
        stream.outboundEnded = endStream
        resume(stream)
    }

    func sendTrailers(on stream: HTTP2Stream, trailers: [HTTPHeaderField]) {
        loop.assertInEventLoop()
        guard !stream.isClosed, stream.hasDataProvider, !stream.outboundEnded, stream.pendingTrailers == nil else {
            return
        }
        stream.pendingTrailers = trailers
        resume(stream)
    }

    func reset(_ stream: HTTP2Stream, errorCode: UInt32) {
        loop.assertInEventLoop()
        guard let session, !stream.isClosed else { return }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, errorCode)
        flushUnlessInSession()
    }

    private func resume(_ stream: HTTP2Stream) {
        guard let session else { return }
        if stream.dataDeferred {
            stream.dataDeferred = false
            nghttp2_session_resume_data(session, stream.id)
        }
        flushUnlessInSession()
    }

    // MARK: Shutdown

    /// Graceful shutdown: a GOAWAY notice now, the final GOAWAY (naming the
    /// last stream we will serve) shortly after; the connection closes when
    /// its last stream ends.
    public func beginGracefulShutdown() {
        loop.assertInEventLoop()
        guard let session, !isClosed, shutdownTimer == nil else { return }
        if role == .server { nghttp2_submit_shutdown_notice(session) }
        flush()
        // One round trip lets requests already in flight from the peer arrive.
        shutdownTimer = loop.schedule(after: limits.goAwayNotice) { [weak self] in
            guard let self, let session = self.session, !self.isClosed else { return }
            nghttp2_submit_goaway(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
                nghttp2_session_get_last_proc_stream_id(session), NGHTTP2_NO_ERROR.rawValue, nil, 0)
            self.flush()
        }
    }

    /// Closes the socket at once; open streams see CANCEL.
    public func close() {
        loop.assertInEventLoop()
        if inSessionCall {
            closeRequested = true
            return
        }
        guard !isClosed else { return }
        isClosed = true
        if let shutdownTimer { loop.cancel(shutdownTimer) }
        if let lingerTimer { loop.cancel(lingerTimer) }
        if let handshakeTimer { loop.cancel(handshakeTimer) }
        if let idleTimer { loop.cancel(idleTimer) }
        if let writeProgressTimer { loop.cancel(writeProgressTimer) }
        loop.unregister(fd: fd)
        Glibc.close(fd)
        let open = streams.values.sorted { $0.id < $1.id }
        streams.removeAll()
        for stream in open where !stream.isClosed {
            stream.isClosed = true
            stream.delegate?.streamDidClose(stream, errorCode: HTTP2ErrorCodes.connectionClosed)
            stream.delegate = nil
        }
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        let onClose = self.onClose
        self.onClose = nil
        onNewStream = nil
        onClose?()
    }

    // MARK: I/O

    /// The session is finished (GOAWAY sent or received, no streams left).
    /// Closing at once while the peer's bytes are still unread would make
    /// the kernel send RST and the peer could lose our GOAWAY; so half-close,
    /// discard input until the peer hangs up or a short linger passes.
    private func lingerThenClose() {
        guard lingerTimer == nil, !isClosed else { return }
        // Over TLS, say so first (close_notify, one non-blocking attempt):
        // without it the peer cannot tell our end from a cut connection.
        tlsSession?.sendCloseNotify()
        Glibc.shutdown(fd, Int32(SHUT_WR))
        lingerTimer = loop.schedule(after: limits.closeLinger) { [weak self] in
            self?.close()
        }
    }

    private func discardInput() {
        for _ in 0..<Self.readsPerEventMax {
            let outcome = readBuffer.withUnsafeMutableBytes { transport.read(into: $0) }
            switch outcome {
            case .bytes: if transport.lastReadDrainedSocket { return }
            case .wouldBlock: return
            case .endOfStream, .failed: return close()
            }
        }
    }

    private func handle(_ events: EventLoop.IOEvents) {
        guard !isClosed else { return }
        if lingerTimer != nil { return discardInput() }
        // A TLS read may stop until the socket is writable (SSL_read wants
        // to write, e.g. to answer a key update): `flush` then watches
        // writability, and the read is retried when it comes, or input
        // already received would wait for the next readable event.
        let readRetry = events.contains(.writable) && transport.needsWritable
        if events.contains(.readable) || !events.intersection(.hangup).isEmpty || readRetry {
            readingInput = true
            readAvailable()
            readingInput = false
        }
        if !isClosed { flush() }
        startOffLoopWork()
    }

    /// Runs `work` on the cooperative pool. Work asked for while a read is
    /// processed starts after it, all in one Task, once our replies are
    /// written: one thread wake-up per read instead of one per request,
    /// which matters most when the loop and the pool share a core.
    func startOffLoop(_ work: @escaping @Sendable () -> Void) {
        loop.assertInEventLoop()
        if readingInput {
            offLoopWork.append(work)
        } else {
            Task { work() }
        }
    }

    private func startOffLoopWork() {
        guard !offLoopWork.isEmpty else { return }
        let batch = offLoopWork
        offLoopWork = []
        Task {
            for work in batch { work() }
        }
    }

    private func readAvailable() {
        for _ in 0..<Self.readsPerEventMax {
            guard let session, !isClosed else { return }
            let outcome = readBuffer.withUnsafeMutableBytes { transport.read(into: $0) }
            switch outcome {
            case .bytes(let count):
                inSessionCall = true
                let consumed = readBuffer.withUnsafeBufferPointer {
                    nghttp2_session_mem_recv(session, $0.baseAddress, count)
                }
                inSessionCall = false
                terminateIfResetBudgetExhausted()
                if consumed < 0 || closeRequested {
                    // Let nghttp2 put its GOAWAY on the wire, best effort, before closing.
                    flush()
                    close()
                    return
                }
                if transport.lastReadDrainedSocket { return }
            case .wouldBlock:
                return
            case .endOfStream, .failed:
                close()
                return
            }
        }
    }

    private func flushUnlessInSession() {
        if !inSessionCall && !writesBatched { flush() }
    }

    /// Runs `body`, deferring the writes it causes, then writes them at
    /// once: many responses leave in one write call instead of one each.
    func batchingWrites(_ body: () -> Void) {
        loop.assertInEventLoop()
        guard !writesBatched else { return body() }
        writesBatched = true
        body()
        writesBatched = false
        flush()
    }

    /// Serializes pending frames and writes as much as the socket takes.
    func flush() {
        guard !isClosed, let session else { return }
        while true {
            if writeIndex == writeBuffer.count {
                writeStalledSince = nil
                writeBuffer.removeAll(keepingCapacity: true)
                writeIndex = 0
                inSessionCall = true
                while writeBuffer.count < Self.writeBatchBytes {
                    var pointer: UnsafePointer<UInt8>?
                    let count = nghttp2_session_mem_send(session, &pointer)
                    if count < 0 {
                        inSessionCall = false
                        close()
                        return
                    }
                    guard count > 0, let pointer else { break }
                    writeBuffer.append(contentsOf: UnsafeBufferPointer(start: pointer, count: count))
                }
                inSessionCall = false
                if closeRequested { close(); return }
                // Its GOAWAY is serialized on the next round.
                if terminateIfResetBudgetExhausted() { continue }
                if writeBuffer.isEmpty { break }
            }
            let outcome = writeBuffer.withUnsafeBytes { bytes in
                transport.write(UnsafeRawBufferPointer(rebasing: bytes[writeIndex...]))
            }
            switch outcome {
            case .wrote(let count):
                writeIndex += count
            case .wouldBlock:
                if writeStalledSince == nil && responseWriteTimeout != nil {
                    let now = ContinuousClock.now
                    writeStalledSince = now
                    armWriteProgressTimer(from: now)
                }
                // TLS may instead wait for readability (handshake); reads then flush again.
                watchWritable(transport.needsWritable)
                return
            case .failed:
                close()
                return
            }
        }
        watchWritable(transport.needsWritable)
        if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
            lingerThenClose()
        }
    }

    /// The peer made more streams end in resets before our answers than
    /// `resetBudget` allows: GOAWAY(ENHANCE_YOUR_CALM), no further input
    /// read, and the connection closes once the GOAWAY is out (as after
    /// nghttp2's own rapid-reset limit). Outside nghttp2's calls only.
    /// True when it terminated the session just now.
    @discardableResult
    private func terminateIfResetBudgetExhausted() -> Bool {
        guard resetBudgetExhausted, !terminatedForResets, let session else { return false }
        terminatedForResets = true
        nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
        return true
    }

    private func watchWritable(_ writable: Bool) {
        guard writable != watchingWritable, !isClosed else { return }
        watchingWritable = writable
        try? loop.modify(fd: fd, events: writable ? [.readable, .writable] : .readable)
    }

    // MARK: nghttp2 callbacks (on the loop thread, inside mem_recv/mem_send)

    /// Calls `body` with the connection behind nghttp2's user data, without
    /// retaining it: callbacks run only inside this connection's own
    /// `mem_recv`/`mem_send` calls, so it is alive for their whole duration
    /// (and a retain here is costly: weak references give it a side table).
    fileprivate static func with<R>(_ userData: UnsafeMutableRawPointer?, _ body: (HTTP2Connection) -> R) -> R {
        Unmanaged<HTTP2Connection>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    fileprivate func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard role == .server, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        else { return 0 }
        let stream = HTTP2Stream(id: frame.pointee.hd.stream_id, connection: self)
        streams[stream.id] = stream
        idleSince = nil
        stream.delegate = onNewStream?(stream)
        return 0
    }

    fileprivate func header(streamID: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)
        -> Int32
    {
        guard let stream = streams[streamID] else { return 0 }
        stream.receivingHeaderBytes += name.count + value.count + 32
        if stream.receivingHeaderBytes > limits.headerListBytesMax {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
        }
        // The rest of a refused block is still decoded (HPACK's table) but not kept.
        if stream.droppingReceivedHeaders { return 0 }
        if role == .server, let delegate = stream.delegate,
            !delegate.streamIsReceivingHeaders(stream, bytes: stream.receivingHeaderBytes)
        {
            stream.droppingReceivedHeaders = true
            stream.receivingHeaders = []
            return 0
        }
        if stream.receivingHeaders.isEmpty { stream.receivingHeaders.reserveCapacity(Self.headerFieldsExpected) }
        stream.receivingHeaders.append(
            HTTPHeaderField(
                name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
        return 0
    }

    fileprivate func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        let header = frame.pointee.hd
        let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue:
            guard let stream = streams[header.stream_id] else { return 0 }
            let fields = stream.receivingHeaders
            stream.receivingHeaders = []
            stream.receivingHeaderBytes = 0
            stream.droppingReceivedHeaders = false
            // Informational (1xx) responses carry nothing for us.
            if role == .client, let status = fields.first(named: ":status"), status.hasPrefix("1") { return 0 }
            stream.delegate?.streamDidReceiveHeaders(stream, headers: fields, endStream: endStream)
        case NGHTTP2_DATA.rawValue:
            if endStream, let stream = streams[header.stream_id] {
                stream.delegate?.streamDidReceiveData(stream, bytes: [], endStream: true)
            }
        case NGHTTP2_SETTINGS.rawValue:
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { handshakeCompleted() }
        case NGHTTP2_GOAWAY.rawValue:
            receivedGoAway = true
            let onGoAway = self.onGoAway
            self.onGoAway = nil
            onGoAway?()
        default:
            break
        }
        return 0
    }

    fileprivate func frameSent(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        let header = frame.pointee.hd
        // END_STREAM (on HEADERS or DATA; no stream frame carries ACK).
        guard header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0, let stream = streams[header.stream_id] else {
            return 0
        }
        stream.endStreamSent = true
        // The whole response is serialized; what is left of it waits in
        // `writeBuffer`, timed by `writeStalledSince`.
        stream.responsePendingSince = nil
        guard let code = stream.resetAfterEndStream, let session else { return 0 }
        stream.resetAfterEndStream = nil
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, code)
        return 0
    }

    fileprivate func dataChunk(streamID: Int32, bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard let stream = streams[streamID] else { return 0 }
        // A server counts what its delegates hold; a stream that would pass
        // the bound gets none of these bytes and is told to give up its own.
        if role == .server, !bufferedBytes.admit(bytes.count, stream: streamID) {
            stream.delegate?.streamDidExceedBufferedBytesLimit(stream)
            bufferedBytes.release(stream: streamID)
            return 0
        }
        stream.delegate?.streamDidReceiveData(stream, bytes: Array(bytes), endStream: false)
        return 0
    }

    /// The stream's delegate no longer holds the DATA bytes it received.
    func releaseBufferedBytes(of stream: HTTP2Stream) {
        loop.assertInEventLoop()
        bufferedBytes.release(stream: stream.id)
    }

    fileprivate func streamClosed(streamID: Int32, errorCode: UInt32) -> Int32 {
        bufferedBytes.release(stream: streamID)
        guard let stream = streams.removeValue(forKey: streamID) else { return 0 }
        if role == .server && streams.isEmpty { idleSince = .now }
        // Closed without our END_STREAM: reset, by the peer or for its error.
        if role == .server, !stream.endStreamSent, !resetBudgetExhausted, !resetBudget.spend(now: .now) {
            resetBudgetExhausted = true
        }
        stream.isClosed = true
        stream.delegate?.streamDidClose(stream, errorCode: errorCode)
        stream.delegate = nil
        return 0
    }

    fileprivate func readData(
        streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        guard let stream = streams[streamID], let session else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        let available = stream.outbound.count - stream.outboundIndex
        let count = min(length, available)
        if count > 0 {
            stream.outbound.withUnsafeBufferPointer { source in
                buffer.update(from: source.baseAddress! + stream.outboundIndex, count: count)
            }
            stream.outboundIndex += count
        }
        guard stream.outboundIndex == stream.outbound.count else { return count }
        stream.outbound.removeAll(keepingCapacity: true)
        stream.outboundIndex = 0
        if stream.outboundEnded {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
        } else if let trailers = stream.pendingTrailers {
            stream.pendingTrailers = nil
            stream.outboundEnded = true
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue | NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
            _ = withNameValues(trailers) { nva, n in nghttp2_submit_trailer(session, streamID, nva, n) }
        } else if count == 0 {
            stream.dataDeferred = true
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        return count
    }
}

/// Calls `body` with nghttp2 name/value pairs for `fields`; the pointers are
/// valid only inside `body` (nghttp2 copies them on submit). The bytes and
/// pairs live in temporary (stack, when small) allocations, not on the heap.
private func withNameValues<R>(_ fields: [HTTPHeaderField], _ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
    var byteCount = 0
    for field in fields { byteCount += field.name.utf8.count + field.value.utf8.count }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(byteCount, 1)) { storage in
        withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: max(fields.count, 1)) { pairs in
            let base = storage.baseAddress!
            var offset = 0
            for (index, field) in fields.enumerated() {
                let nameStart = offset
                offset = copyUTF8(field.name, into: storage, at: offset)
                let valueStart = offset
                offset = copyUTF8(field.value, into: storage, at: offset)
                pairs.initializeElement(
                    at: index,
                    to: nghttp2_nv(
                        name: base + nameStart, value: base + valueStart,
                        namelen: valueStart - nameStart, valuelen: offset - valueStart,
                        flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            defer { pairs.baseAddress!.deinitialize(count: fields.count) }
            return body(UnsafePointer(pairs.baseAddress!), fields.count)
        }
    }
}

/// Copies `string`'s UTF-8 bytes into `buffer` at `offset`; returns the offset after them.
private func copyUTF8(_ string: String, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
    var string = string
    return string.withUTF8 { bytes in
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return offset }
        (buffer.baseAddress! + offset).update(from: source, count: bytes.count)
        return offset + bytes.count
    }
}

// MARK: C callbacks: recover the connection from user data and forward.

private let onBeginHeadersCallback: nghttp2_on_begin_headers_callback = { _, frame, userData in
    HTTP2Connection.with(userData) { $0.beginHeaders(frame!) }
}

private let onHeaderCallback: nghttp2_on_header_callback = {
    _, frame, name, nameLength, value, valueLength, _, userData in
    HTTP2Connection.with(userData) {
        $0.header(
            streamID: frame!.pointee.hd.stream_id,
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength))
    }
}

private let onFrameRecvCallback: nghttp2_on_frame_recv_callback = { _, frame, userData in
    HTTP2Connection.with(userData) { $0.frameReceived(frame!) }
}

private let onFrameSendCallback: nghttp2_on_frame_send_callback = { _, frame, userData in
    HTTP2Connection.with(userData) { $0.frameSent(frame!) }
}

private let onDataChunkRecvCallback: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
    HTTP2Connection.with(userData) {
        $0.dataChunk(streamID: streamID, bytes: UnsafeBufferPointer(start: data, count: length))
    }
}

private let onStreamCloseCallback: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
    HTTP2Connection.with(userData) { $0.streamClosed(streamID: streamID, errorCode: errorCode) }
}

private let dataReadCallback: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
    HTTP2Connection.with(userData) { $0.readData(streamID: streamID, into: buffer!, length: length, flags: flags!) }
}
