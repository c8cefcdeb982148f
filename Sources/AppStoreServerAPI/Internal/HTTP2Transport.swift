import Locking
import RPCRuntime

/// The I/O half of the client: its own epoll event loop thread (RPCRuntime's
/// `EventLoop`) driving one `HostConnection` per environment. Async callers
/// hand a request over and suspend on a continuation; nothing here blocks
/// the cooperative pool.
final class HTTP2Transport: Sendable {
    private let loop: EventLoop
    private let hosts: HostTable
    private let limits: AppStoreServerAPILimits
    private let closed = Mutex(false)

    init(configuration: AppStoreServerAPIConfiguration) throws(AppStoreServerAPIConfigurationError) {
        limits = configuration.limits
        var contexts: [AppStoreServerEnvironment: (BaseURL, TLSClientContext)] = [:]
        for environment in AppStoreServerEnvironment.allCases {
            let base = try configuration.baseURL(environment)
            do {
                contexts[environment] = (
                    base, try TLSClientContext(trustRootsPath: configuration.trustRootsPath, serverName: base.host)
                )
            } catch {
                throw .init(
                    setting: AppStoreServerAPIConfiguration.Variable.caPath,
                    reason: "cannot load the trust roots: \(error)")
            }
        }
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "app-store-api")
        } catch {
            throw .init(setting: "event loop", reason: "\(error)")
        }
        self.loop = loop
        var hosts: [AppStoreServerEnvironment: HostConnection] = [:]
        for (environment, (base, tls)) in contexts {
            hosts[environment] = HostConnection(
                environment: environment, base: base, dialHost: configuration.connectAddressOverride,
                tls: tls, limits: configuration.limits, loop: loop)
        }
        self.hosts = HostTable(hosts, loop: loop)
    }

    deinit {
        let hosts = self.hosts
        loop.execute { for host in hosts.value.values { host.shutdown() } }
        loop.stopSoon()
    }

    /// One attempt: the answer, whatever its status, or why there is none.
    func send(_ request: AppStoreHTTPRequest, to environment: AppStoreServerEnvironment) async -> Result<
        AppStoreHTTPResponse, AppStoreServerAPIError
    > {
        if closed.withLock({ $0 }) {
            return .failure(AppStoreServerAPIError(kind: .cancelled, detail: "the client is closed"))
        }
        let loop = self.loop
        let hosts = self.hosts
        let limits = self.limits
        // Created and used on the loop only.
        let callBox = Mutex<LoopBound<HTTPCall>?>(nil)
        let makeCall: @Sendable () -> HTTPCall = {
            HTTPCall(
                request: request, bodyBytesMax: limits.responseBodyBytesMax, timeout: limits.requestTimeout, loop: loop)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: HTTPCall.Completion) in
                do throws(EventLoopSubmissionError) {
                    try loop.submit {
                        let existing = callBox.withLock { $0 }
                        let call = existing?.value ?? makeCall()
                        if existing == nil { callBox.withLock { $0 = LoopBound(call, loop: loop) } }
                        call.begin(continuation)
                        guard !call.isFinished, let host = hosts.value[environment] else { return }
                        host.submit(call)
                    }
                } catch .loopStopped {
                    continuation.resume(
                        returning: .failure(AppStoreServerAPIError(kind: .cancelled, detail: "the client is closed")))
                } catch {
                    continuation.resume(
                        returning: .failure(AppStoreServerAPIError(kind: .overloaded, detail: "\(error)")))
                }
            }
        } onCancel: {
            loop.execute {
                let call: HTTPCall
                if let existing = callBox.withLock({ $0 }) {
                    call = existing.value
                } else {
                    // Cancelled before the call reached the loop: make it finished.
                    call = makeCall()
                    callBox.withLock { $0 = LoopBound(call, loop: loop) }
                }
                call.fail(AppStoreServerAPIError(kind: .cancelled, detail: "the task was cancelled"))
            }
        }
    }

    /// Fails calls in flight (`cancelled`), closes the connections and
    /// stops the loop thread.
    func close() async {
        let wasClosed = closed.withLock { value in
            defer { value = true }
            return value
        }
        guard !wasClosed else { return }
        let hosts = self.hosts
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.execute {
                for host in hosts.value.values { host.shutdown() }
                continuation.resume()
            }
            if !accepted { continuation.resume() }
        }
        await loop.shutdown()
    }
}

/// The hosts, made before the loop can see them and from then on touched
/// only on `loop` (checked in debug builds), which makes the unchecked
/// conformance sound.
final class HostTable: @unchecked Sendable {
    private let hosts: [AppStoreServerEnvironment: HostConnection]
    private let loop: EventLoop

    init(_ hosts: [AppStoreServerEnvironment: HostConnection], loop: EventLoop) {
        self.hosts = hosts
        self.loop = loop
    }

    var value: [AppStoreServerEnvironment: HostConnection] {
        loop.assertInEventLoop()
        return hosts
    }
}
