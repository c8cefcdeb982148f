import RPCCore
import RPCRuntime

/// One App Store host (production or sandbox): one multiplexed HTTP/2
/// connection over TLS, opened on demand and again after it drops or the
/// server sends GOAWAY. At most `concurrentRequestsMax` streams at once; up
/// to `queuedRequestsMax` requests wait for a stream or the connection,
/// further ones fail as `overloaded`. Loop-confined. It does not retry:
/// a failed connect fails the waiting calls, and the client decides.
final class HostConnection {
    private enum State {
        case idle
        case connecting(Connecting)
        case ready(HTTP2Connection)
    }

    /// One connect + handshake in progress.
    private final class Connecting {
        let socket: ConnectedSocket
        var timer: EventLoop.TimerID?
        init(socket: ConnectedSocket) { self.socket = socket }
    }

    let environment: AppStoreServerEnvironment
    private let base: BaseURL
    private let dialHost: String
    private let tls: TLSClientContext
    private let limits: AppStoreServerAPILimits
    private let http2Limits: RPCLimits
    private let loop: EventLoop
    private var state: State = .idle
    private var waiting: [HTTPCall] = []
    private var active: [ObjectIdentifier: HTTPCall] = [:]
    /// Connections that received GOAWAY, kept until their streams end.
    private var draining: [ObjectIdentifier: HTTP2Connection] = [:]
    private var isShutDown = false

    init(
        environment: AppStoreServerEnvironment, base: BaseURL, dialHost: String?, tls: TLSClientContext,
        limits: AppStoreServerAPILimits, loop: EventLoop
    ) {
        self.environment = environment
        self.base = base
        self.dialHost = dialHost ?? base.host
        self.tls = tls
        self.limits = limits
        self.loop = loop
        var http2 = RPCLimits()
        // Our receive windows bound what the server may send ahead; an
        // answer is at most responseBodyBytesMax anyway.
        http2.streamWindowBytes = max(64 * 1024, min(limits.responseBodyBytesMax, 1024 * 1024))
        http2.connectionWindowBytes = http2.streamWindowBytes * 4
        http2.concurrentStreamsMax = limits.concurrentRequestsMax
        http2.messageSizeBytesMax = limits.responseBodyBytesMax
        self.http2Limits = http2
    }

    var authority: String { base.authority }

    func submit(_ call: HTTPCall) {
        guard !call.isFinished else { return }
        guard !isShutDown else {
            return call.fail(AppStoreServerAPIError(kind: .cancelled, detail: "the client is closed"))
        }
        waiting.removeAll { $0.isFinished }
        guard waiting.count < limits.queuedRequestsMax || canStartNow else {
            return call.fail(
                AppStoreServerAPIError(
                    kind: .overloaded,
                    detail: "\(waiting.count) requests already wait for \(environment) (queuedRequestsMax)"))
        }
        waiting.append(call)
        pump()
    }

    private var canStartNow: Bool {
        if case .ready = state { return active.count < limits.concurrentRequestsMax }
        return false
    }

    /// Starts waiting calls on free streams, or opens the connection.
    private func pump() {
        waiting.removeAll { $0.isFinished }
        guard !waiting.isEmpty, !isShutDown else { return }
        switch state {
        case .idle:
            connect()
        case .connecting:
            return
        case .ready(let connection):
            while active.count < limits.concurrentRequestsMax, !waiting.isEmpty {
                let call = waiting.removeFirst()
                guard !call.isFinished else { continue }
                guard start(call, on: connection) else {
                    // The connection takes no new streams (GOAWAY or gone): use a new one.
                    waiting.insert(call, at: 0)
                    retire(connection)
                    return pump()
                }
            }
        }
    }

    private func start(_ call: HTTPCall, on connection: HTTP2Connection) -> Bool {
        var headers = [
            HTTPHeaderField(name: ":method", value: call.request.method),
            HTTPHeaderField(name: ":scheme", value: "https"),
            HTTPHeaderField(name: ":authority", value: base.authority),
            HTTPHeaderField(name: ":path", value: call.request.path),
        ]
        headers += call.request.headers
        guard let stream = connection.startRequest(headers: headers, body: call.request.body, delegate: call) else {
            return false
        }
        let key = ObjectIdentifier(call)
        active[key] = call
        call.attach(stream) { [weak self] in
            self?.active[key] = nil
            self?.pump()
        }
        return true
    }

    // MARK: Connecting

    private func connect() {
        do {
            // getaddrinfo may block this loop thread briefly; never the cooperative pool.
            let (socket, _) = try ConnectedSocket.connect(host: dialHost, port: base.port)
            let attempt = Connecting(socket: socket)
            state = .connecting(attempt)
            attempt.timer = loop.schedule(after: limits.connectTimeout) { [weak self] in
                self?.connectFailed(
                    attempt,
                    AppStoreServerAPIError(
                        kind: .connectionFailed,
                        detail:
                            "connecting to \(self?.base.authority ?? "") took longer than \(self?.limits.connectTimeout ?? .zero)"
                    ))
            }
            // Writable once the TCP connect finished (or failed); a socket
            // already connected reports writable at once.
            try loop.register(fd: socket.descriptor, events: .writable) { [weak self] _ in self?.advance(attempt) }
        } catch {
            if case .connecting(let attempt) = state {
                connectFailed(
                    attempt,
                    AppStoreServerAPIError(
                        kind: .connectionFailed, detail: "cannot connect to \(base.authority): \(error)"))
            } else {
                failWaiting(
                    AppStoreServerAPIError(
                        kind: .connectionFailed, detail: "cannot connect to \(base.authority): \(error)"))
            }
        }
    }

    private func advance(_ attempt: Connecting) {
        guard case .connecting(let current) = state, current === attempt else { return }
        let socket = attempt.socket
        if !socket.isTLS {
            if let error = socket.finishConnect() {
                return connectFailed(
                    attempt,
                    AppStoreServerAPIError(
                        kind: .connectionFailed, detail: "cannot connect to \(base.authority): \(error)"))
            }
            do {
                try socket.startClientTLS(tls)
            } catch {
                return connectFailed(
                    attempt, AppStoreServerAPIError(kind: .tlsFailed, detail: "TLS setup failed: \(error)"))
            }
        }
        switch socket.continueTLSHandshake() {
        case .complete:
            guard socket.negotiatedProtocol == "h2" else {
                return connectFailed(
                    attempt,
                    AppStoreServerAPIError(
                        kind: .tlsFailed, detail: "\(base.authority) did not agree to HTTP/2 (ALPN h2)"))
            }
            established(attempt)
        case .wantsReadable:
            try? loop.modify(fd: socket.descriptor, events: .readable)
        case .wantsWritable:
            try? loop.modify(fd: socket.descriptor, events: .writable)
        case .failed(let reason):
            connectFailed(
                attempt, AppStoreServerAPIError(kind: .tlsFailed, detail: "TLS with \(base.host) refused: \(reason)"))
        }
    }

    private func established(_ attempt: Connecting) {
        if let timer = attempt.timer { loop.cancel(timer) }
        loop.unregister(fd: attempt.socket.descriptor)
        do {
            let connection = try HTTP2Connection.client(adopting: attempt.socket, loop: loop, limits: http2Limits)
            let key = ObjectIdentifier(connection)
            connection.onGoAway = { [weak self, unowned connection] in self?.retire(connection) }
            connection.onClose = { [weak self] in self?.closed(key) }
            guard !connection.isClosed else {
                state = .idle
                return failWaiting(
                    AppStoreServerAPIError(
                        kind: .connectionLost, detail: "\(base.authority) closed the connection at once"))
            }
            state = .ready(connection)
            pump()
        } catch {
            state = .idle
            failWaiting(
                AppStoreServerAPIError(
                    kind: .connectionFailed, detail: "HTTP/2 setup with \(base.authority) failed: \(error)"))
        }
    }

    private func connectFailed(_ attempt: Connecting, _ error: AppStoreServerAPIError) {
        guard case .connecting(let current) = state, current === attempt else { return }
        if let timer = attempt.timer { loop.cancel(timer) }
        if attempt.socket.descriptor >= 0 { loop.unregister(fd: attempt.socket.descriptor) }
        attempt.socket.close()
        state = .idle
        failWaiting(error)
    }

    private func failWaiting(_ error: AppStoreServerAPIError) {
        let calls = waiting
        waiting = []
        for call in calls { call.fail(error) }
    }

    /// New streams go to a fresh connection; this one ends with its streams.
    private func retire(_ connection: HTTP2Connection) {
        guard case .ready(let current) = state, current === connection else { return }
        state = .idle
        if !connection.isClosed { draining[ObjectIdentifier(connection)] = connection }
    }

    private func closed(_ key: ObjectIdentifier) {
        draining[key] = nil
        if case .ready(let current) = state, ObjectIdentifier(current) == key {
            state = .idle
            pump()
        }
    }

    /// Fails every call (`cancelled`) and closes every connection.
    func shutdown() {
        isShutDown = true
        let error = AppStoreServerAPIError(kind: .cancelled, detail: "the client is closed")
        failWaiting(error)
        for call in Array(active.values) { call.fail(error) }
        switch state {
        case .ready(let connection): connection.close()
        case .connecting(let attempt): connectFailed(attempt, error)
        case .idle: break
        }
        for connection in Array(draining.values) { connection.close() }
        draining.removeAll()
        state = .idle
    }
}
