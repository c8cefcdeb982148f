#if canImport(Glibc)
import Glibc
#endif
import RPCCore

/// One server address and its multiplexed HTTP/2 connection, reconnecting
/// with exponential backoff. Loop-confined.
final class ClientTarget {
    enum State {
        case idle
        case connecting(fd: Int32, waiting: [ClientCall], timer: EventLoop.TimerID)
        case ready(HTTP2Connection)
        case backoff(until: ContinuousClock.Instant)
    }

    let address: HostAndPort
    private let loop: EventLoop
    private let configuration: RPCClient.Configuration
    private let tlsContext: TLSContext?
    private(set) var state: State = .idle
    private var consecutiveFailures = 0
    /// Connections that received GOAWAY, kept alive until their streams finish.
    private var draining: [ObjectIdentifier: HTTP2Connection] = [:]
    private var isShutDown = false

    init(address: HostAndPort, loop: EventLoop, configuration: RPCClient.Configuration, tlsContext: TLSContext?) {
        self.address = address
        self.loop = loop
        self.configuration = configuration
        self.tlsContext = tlsContext
    }

    /// False while backing off after a failed connect.
    var isAvailable: Bool {
        if case .backoff(let until) = state { return ContinuousClock.now >= until }
        return true
    }

    func submit(_ call: ClientCall) {
        guard !call.isFinished else { return }
        guard !isShutDown else {
            return call.fail(RPCError(code: .unavailable, message: "Client closed"))
        }
        switch state {
        case .ready(let connection):
            start(call, on: connection)
        case .connecting(let fd, var waiting, let timer):
            waiting.append(call)
            state = .connecting(fd: fd, waiting: waiting, timer: timer)
        case .idle:
            connect(first: call)
        case .backoff(let until):
            if ContinuousClock.now >= until {
                connect(first: call)
            } else {
                call.fail(
                    RPCError(code: .unavailable, message: "Connection to \(address) failed recently; retrying later"))
            }
        }
    }

    private func start(_ call: ClientCall, on connection: HTTP2Connection) {
        let scheme = tlsContext == nil ? "http" : "https"
        let stream = connection.startRequest(
            headers: call.requestHeaders(authority: address.description, scheme: scheme), body: call.body,
            delegate: call)
        if let stream {
            call.target = self
            call.attach(stream)
        } else if !connection.acceptsNewStreams && !call.movedToFreshConnection {
            // GOAWAY or no stream id left (the connection retired itself and
            // `retire` ran): nothing of the call was sent, so it goes to a
            // fresh connection instead of failing; once, so it cannot bounce.
            retire(connection)
            call.movedToFreshConnection = true
            submit(call)
        } else {
            call.fail(RPCError(code: .unavailable, message: "Connection to \(address) cannot open a stream"))
        }
    }

    private func connect(first call: ClientCall) {
        do {
            let (fd, connected) = try Socket.connect(host: address.host, port: address.port)
            let timer = loop.schedule(after: configuration.connectTimeout) { [weak self] in
                self?.connectFailed(
                    RPCError(code: .unavailable, message: "Connect to \(self?.address.description ?? "") timed out"))
            }
            state = .connecting(fd: fd, waiting: [call], timer: timer)
            if connected {
                connectFinished()
            } else {
                try loop.register(fd: fd, events: .writable) { [weak self] _ in self?.connectFinished() }
            }
        } catch {
            consecutiveFailures += 1
            state = .backoff(until: .now.advanced(by: configuration.backoff.delay(afterFailures: consecutiveFailures)))
            call.fail(RPCError(code: .unavailable, message: "Cannot connect to \(address)", cause: error))
        }
    }

    private func connectFinished() {
        guard case .connecting(let fd, let waiting, let timer) = state else { return }
        loop.unregister(fd: fd)
        let code = Socket.pendingError(fd)
        guard code == 0 else {
            return connectFailed(
                RPCError(
                    code: .unavailable, message: "Cannot connect to \(address)",
                    cause: SystemError(call: "connect", errorNumber: code)))
        }
        loop.cancel(timer)
        do {
            let transport: any ByteTransport =
                try tlsContext.map { try TLSTransport(context: $0, fd: fd, server: false) }
                ?? PlainTransport(fd: fd)
            let connection = try HTTP2Connection(
                loop: loop, fd: fd, transport: transport, role: .client,
                remotePeer: address.description, limits: configuration.limits)
            let key = ObjectIdentifier(connection)
            connection.onGoAway = { [weak self, unowned connection] in self?.retire(connection) }
            connection.onClose = { [weak self, unowned connection] in
                self?.connectionClosed(key, completedHandshake: connection.peerSettingsReceived)
            }
            // A connection counts as made once the server's SETTINGS came: a
            // server that accepts and closes at once (at its connection
            // limit) keeps the backoff growing instead of a reconnect per call.
            connection.onPeerSettings = { [weak self] in self?.consecutiveFailures = 0 }
            if let id = configuration.firstStreamIDForTesting { connection.setNextStreamID(id) }
            state = .ready(connection)
            try connection.start()
            for call in waiting where !call.isFinished { start(call, on: connection) }
        } catch {
            if case .ready(let connection) = state { connection.close() } else { Glibc.close(fd) }
            consecutiveFailures += 1
            state = .backoff(until: .now.advanced(by: configuration.backoff.delay(afterFailures: consecutiveFailures)))
            for call in waiting {
                call.fail(RPCError(code: .unavailable, message: "HTTP/2 setup with \(address) failed", cause: error))
            }
        }
    }

    private func connectFailed(_ error: RPCError) {
        guard case .connecting(let fd, let waiting, let timer) = state else { return }
        loop.cancel(timer)
        loop.unregister(fd: fd)
        Glibc.close(fd)
        consecutiveFailures += 1
        state = .backoff(until: .now.advanced(by: configuration.backoff.delay(afterFailures: consecutiveFailures)))
        for call in waiting { call.fail(error) }
    }

    /// The server said GOAWAY, or the connection ran out of stream ids: new
    /// calls go to a fresh connection, this one closes after its last stream.
    private func retire(_ connection: HTTP2Connection) {
        if case .ready(let current) = state, current === connection {
            state = .idle
            draining[ObjectIdentifier(connection)] = connection
        }
    }

    private func connectionClosed(_ key: ObjectIdentifier, completedHandshake: Bool) {
        draining[key] = nil
        guard case .ready(let current) = state, ObjectIdentifier(current) == key else { return }
        if completedHandshake || isShutDown {
            state = .idle
        } else {
            consecutiveFailures += 1
            state = .backoff(until: .now.advanced(by: configuration.backoff.delay(afterFailures: consecutiveFailures)))
        }
    }

    /// Closes every connection; in-flight calls fail with UNAVAILABLE.
    func shutdown() {
        isShutDown = true
        switch state {
        case .ready(let connection):
            connection.close()
        case .connecting:
            connectFailed(RPCError(code: .unavailable, message: "Client closed"))
        case .idle, .backoff:
            break
        }
        for connection in Array(draining.values) { connection.close() }
        draining.removeAll()
        state = .idle
    }
}
