#if canImport(Glibc)
import Glibc
#endif
import Locking
import Synchronization
import CEventIO

/// A single-threaded epoll event loop on its own dedicated thread. Sockets,
/// timers and nghttp2 sessions registered with a loop are touched only on its
/// thread; async code hands work over with `submit` (new work, bounded by
/// `submissionsQueuedMax`) or `execute` (work that completes something already
/// admitted), which wake the loop through an eventfd: only the first work
/// after the loop drained its queue, and only from another thread (the loop
/// looks at its queue before it waits). A loop is also a `TaskExecutor`
/// (see the extension below). Blocking here never blocks Swift's
/// cooperative pool.
public final class EventLoop: @unchecked Sendable {
    /// Identifies a scheduled timer so it can be cancelled.
    public struct TimerID: Hashable, Sendable {
        fileprivate let rawValue: UInt64
    }

    /// Readiness reported for a registered descriptor.
    public struct IOEvents: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = IOEvents(rawValue: EPOLLIN.rawValue)
        public static let writable = IOEvents(rawValue: EPOLLOUT.rawValue)
        public static let hangup = IOEvents(rawValue: EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue)
    }

    private struct TimerEntry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let name: String
    /// Work handed over from other threads; closed for good when the loop exits.
    private struct Submissions {
        var work: [@Sendable () -> Void] = []
        /// How many of `work` came through `submit` (bounded by `submissionsQueuedMax`).
        var boundedCount = 0
        var isAccepting = true
    }

    private let submitted = Mutex(Submissions())
    /// The loop thread's `pthread_self()`, 0 before it starts and after it exits.
    private let loopThread = Atomic<UInt>(0)
    private let stopped = Mutex<Bool>(false)
    private var thread: pthread_t?

    // Loop-confined state.
    private var handlers: [Int32: (IOEvents) -> Void] = [:]
    private var timerHeap: [TimerEntry] = []
    private var timerWork: [UInt64: () -> Void] = [:]
    private var nextTimerID: UInt64 = 1
    private var running = true
    private var exitContinuation: CheckedContinuation<Void, Never>?
    /// Work waiting for the loop to catch up (`whenCaughtUp`), each with the
    /// instant it runs by anyway.
    var catchUpWaiters: [(deadline: ContinuousClock.Instant, work: () -> Void)] = []

    /// Maximum readiness events taken from the kernel per wait.
    private static let eventsPerWaitMax = 256

    /// The default for `submissionsQueuedMax`: far above what a healthy loop
    /// ever has waiting (it drains the queue every iteration), so reaching
    /// it means the loop is stalled and new work is better refused.
    public static let submissionsQueuedMaxDefault = 16_384

    /// Most new work (`submit`) waiting for the loop at once.
    public let submissionsQueuedMax: Int

    /// Most rounds of submitted work between two looks at the descriptors.
    /// Each round runs what the one before queued (a task's next step after
    /// a resumed continuation), so with more than one, a chain of steps
    /// finishes within one iteration instead of paying an `epoll_wait` per
    /// step, and I/O waits for the chain. Right for a loop that serves each
    /// call end to end (PointsService: handlers and database sockets on the
    /// loop); a loop multiplexing many clients' requests around one backend
    /// call (the gateway) answers sooner with 1, reading the backend's
    /// answer between its requests' steps (docs/PERFORMANCE.md, "Session 14").
    public let submittedRoundsPerIterationMax: Int

    /// `submittedRoundsPerIterationMax` for a loop that serves calls end to end.
    public static let submittedRoundsForServingLoop = 8

    public init(
        name: String, submissionsQueuedMax: Int = EventLoop.submissionsQueuedMaxDefault,
        submittedRoundsPerIterationMax: Int = 1
    ) throws {
        precondition(submissionsQueuedMax > 0, "submissionsQueuedMax must be positive")
        precondition(submittedRoundsPerIterationMax > 0, "submittedRoundsPerIterationMax must be positive")
        self.name = name
        self.submissionsQueuedMax = submissionsQueuedMax
        self.submittedRoundsPerIterationMax = submittedRoundsPerIterationMax
        epollFD = try Syscall.call("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        do {
            wakeFD = try Syscall.call("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
        } catch {
            close(epollFD)
            throw error
        }
        var event = CEventIO_epoll_event_make(EPOLLIN.rawValue, wakeFD)
        _ = try? Syscall.call("epoll_ctl") { epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) }
        try startThread()
    }

    deinit {
        close(wakeFD)
        close(epollFD)
    }

    private func startThread() throws {
        let box = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                let loop = Unmanaged<EventLoop>.fromOpaque(argument!).takeRetainedValue()
                loop.run()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<EventLoop>.fromOpaque(box).release()
            throw SystemError(call: "pthread_create", errorNumber: result)
        }
        thread = handle
        pthread_detach(handle)
    }

    /// True when called on this loop's thread.
    public var inEventLoop: Bool {
        loopThread.load(ordering: .relaxed) == UInt(pthread_self())
    }

    /// Traps when loop-confined state is touched from another thread.
    public func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "not on event loop \(name)", file: file, line: line)
    }

    /// Runs new work (a call, a request) on the loop thread soon. Safe from
    /// any thread. Throws, dropping `work`, once the loop has exited or when
    /// `submissionsQueuedMax` submissions already wait; callers waiting on a
    /// continuation must then resume it themselves.
    public func submit(_ work: @escaping @Sendable () -> Void) throws(EventLoopSubmissionError) {
        if let refusal = enqueue(work, bounded: true) { throw refusal }
    }

    /// Runs `work` on the loop thread soon. Safe from any thread. For work
    /// that completes or cancels something already admitted (a handler's
    /// result, a cancellation, a shutdown), which must not be shed: it is
    /// not counted against `submissionsQueuedMax`, and its number is bounded
    /// by the work admitted. Returns false, dropping `work`, once the loop
    /// has exited; callers waiting on a continuation must then resume it
    /// themselves.
    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        enqueue(work, bounded: false) == nil
    }

    /// Queues `work` and wakes the loop; the refusal when it is not queued.
    private func enqueue(_ work: @escaping @Sendable () -> Void, bounded: Bool) -> EventLoopSubmissionError? {
        let max = submissionsQueuedMax
        let (refusal, wasEmpty): (EventLoopSubmissionError?, Bool) = submitted.withLock { queue in
            guard queue.isAccepting else { return (.loopStopped, false) }
            if bounded {
                guard queue.boundedCount < max else { return (.queueFull(submissionsQueuedMax: max), false) }
                queue.boundedCount += 1
            }
            let wasEmpty = queue.work.isEmpty
            queue.work.append(work)
            return (nil, wasEmpty)
        }
        // Only the first work after a drain wakes the loop: later work finds
        // the wake-up already sent. The loop's own work needs none (it checks
        // the queue before it waits).
        if refusal == nil && wasEmpty && !inEventLoop {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
        return refusal
    }

    // MARK: Descriptors (loop thread only)

    /// Watches `fd`; `handler` runs on the loop for each readiness event.
    public func register(fd: Int32, events: IOEvents, handler: @escaping (IOEvents) -> Void) throws {
        assertInEventLoop()
        var event = CEventIO_epoll_event_make(events.rawValue | EPOLLRDHUP.rawValue, fd)
        try Syscall.call("epoll_ctl") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
        handlers[fd] = handler
    }

    /// Changes the events watched for `fd`.
    public func modify(fd: Int32, events: IOEvents) throws {
        assertInEventLoop()
        var event = CEventIO_epoll_event_make(events.rawValue | EPOLLRDHUP.rawValue, fd)
        try Syscall.call("epoll_ctl") { epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
    }

    /// Stops watching `fd` (the caller still owns and closes it).
    public func unregister(fd: Int32) {
        assertInEventLoop()
        handlers[fd] = nil
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    // MARK: One-shot waits (any thread)

    /// Marks an event's token as a retained `OneShotWaiter` (user-space
    /// pointers never have the top bit set); a registered descriptor's
    /// token is the descriptor itself (`register`).
    private static let oneShotTag: UInt64 = 1 << 63

    /// Watches `fd` (never `register`ed with this loop) for one readiness
    /// event: readable (and hang-up), plus writable when asked. From any
    /// thread; `waiter` is retained until the event, and its
    /// `descriptorBecameReady` runs once on the loop. `alreadyRegistered`
    /// says whether `fd` is already in the loop's epoll set (added once,
    /// modified afterwards, re-added if the descriptor was closed and
    /// reused); the caller keeps that memory, and records the registration
    /// before it calls, since the event may run on the loop before this
    /// returns. On failure nothing stays retained. The descriptor's owner
    /// calls `disarm` before closing it, and does not stop the loop while a
    /// wait is armed (its waiter would never run).
    public func armOnce(fd: Int32, writable: Bool, alreadyRegistered: Bool, waiter: OneShotWaiter) throws(SystemError) {
        let pointer = UInt64(UInt(bitPattern: Unmanaged.passRetained(waiter).toOpaque()))
        let interest =
            EPOLLIN.rawValue | EPOLLONESHOT.rawValue | EPOLLRDHUP.rawValue | (writable ? EPOLLOUT.rawValue : 0)
        var event = CEventIO_epoll_event_make_token(interest, pointer | Self.oneShotTag)
        waiter.handOff.give()
        guard CEventIO_epoll_arm(epollFD, fd, &event, alreadyRegistered ? 1 : 0) == 0 else {
            let code = errno
            Unmanaged<OneShotWaiter>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(pointer))!).release()
            throw SystemError(call: "epoll_ctl", errorNumber: code)
        }
    }

    /// Removes a descriptor armed with `armOnce` from the epoll set, before
    /// its owner closes it; only when no wait is armed. From any thread.
    public func disarm(fd: Int32) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    // MARK: Timers (loop thread only)

    /// Runs `work` on the loop after `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> TimerID {
        schedule(at: ContinuousClock.now.advanced(by: delay), work)
    }

    /// Runs `work` on the loop at `deadline`.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping () -> Void) -> TimerID {
        assertInEventLoop()
        let id = nextTimerID
        nextTimerID += 1
        timerWork[id] = work
        timerHeap.append(TimerEntry(deadline: deadline, id: id))
        siftUp(timerHeap.count - 1)
        return TimerID(rawValue: id)
    }

    /// Cancels a timer (nothing happens for one that fired or was cancelled).
    /// Its heap entry stays until it surfaces, unless cancelled entries
    /// outnumber live ones: a server that re-arms a timer per request (an
    /// idle timeout of 30 s at 20,000 requests a second) would otherwise keep
    /// hundreds of thousands of dead entries, and pay for them in every sift.
    public func cancel(_ timer: TimerID) {
        assertInEventLoop()
        guard timerWork.removeValue(forKey: timer.rawValue) != nil else { return }
        if timerHeap.count > 2 * timerWork.count + Self.cancelledTimerEntriesKeptMax { dropCancelledTimerEntries() }
    }

    /// Heap entries of cancelled timers tolerated beyond the live ones.
    static let cancelledTimerEntriesKeptMax = 64

    /// Entries in the timer heap, live and cancelled (tests).
    var timerHeapCount: Int {
        assertInEventLoop()
        return timerHeap.count
    }

    private func dropCancelledTimerEntries() {
        timerHeap.removeAll { timerWork[$0.id] == nil }
        for index in stride(from: timerHeap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    // MARK: Shutdown

    /// Stops the loop thread. Resumes once the thread has finished its last
    /// iteration; pending work and timers are dropped, and registered
    /// descriptors belong to their owners. Suspends rather than joining the
    /// thread, so the cooperative pool never blocks.
    public func shutdown() async {
        let alreadyStopped = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !alreadyStopped else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = execute { [self] in
                running = false
                exitContinuation = continuation
            }
            if !accepted { continuation.resume() }
        }
    }

    /// Asks the loop to stop without waiting (for owners' deinit).
    public func stopSoon() {
        let alreadyStopped = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !alreadyStopped else { return }
        execute { [self] in running = false }
    }

    // MARK: The loop

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .relaxed)
        Self.blockBrokenPipeSignalOnThisThread()
        var events = [epoll_event](repeating: epoll_event(), count: Self.eventsPerWaitMax)
        while running {
            var timeout = nextTimeoutMilliseconds()
            // Waiting for a catch-up, the loop looks without blocking: it has
            // caught up when that look finds nothing and nothing was queued.
            let awaitsCatchUp = !catchUpWaiters.isEmpty
            var queuedBeforeLook = false
            if awaitsCatchUp {
                timeout = 0
                queuedBeforeLook = hasSubmittedWork
            }
            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), timeout)
            }
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait failed: errno \(errno)")
            }
            for index in 0..<Int(count) {
                let token = CEventIO_epoll_event_token(&events[index])
                if token & Self.oneShotTag != 0 {
                    // Armed by `armOnce`: delivered exactly once, then released.
                    let waiter = Unmanaged<OneShotWaiter>.fromOpaque(
                        UnsafeRawPointer(bitPattern: UInt(token & ~Self.oneShotTag))!
                    )
                    .takeRetainedValue()
                    waiter.handOff.take()
                    waiter.descriptorBecameReady(CEventIO_epoll_event_events(&events[index]))
                    continue
                }
                let fd = CEventIO_epoll_event_fd(&events[index])
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                    continue
                }
                // The handler may have been removed by an earlier event in this batch.
                handlers[fd]?(IOEvents(rawValue: CEventIO_epoll_event_events(&events[index])))
            }
            // Work queued by work runs in the next round, up to
            // `submittedRoundsPerIterationMax` rounds; then the descriptors
            // get their turn again. With one round the queue is not looked at twice.
            runSubmitted()
            for _ in 1..<submittedRoundsPerIterationMax {
                guard hasSubmittedWork else { break }
                runSubmitted()
            }
            runDueTimers()
            if awaitsCatchUp {
                runCatchUpWaiters(caughtUp: count == 0 && !queuedBeforeLook && !hasSubmittedWork)
            }
        }
        // Run what was already submitted (it may resume continuations), and
        // every catch-up waiter, then refuse more; bounded because work
        // submitted from here on is refused.
        while true {
            let batch = submitted.withLock { queue in
                defer { queue.work.removeAll(); queue.boundedCount = 0 }
                if queue.work.isEmpty { queue.isAccepting = false }
                return queue.work
            }
            if batch.isEmpty && catchUpWaiters.isEmpty { break }
            for work in batch { work() }
            runCatchUpWaiters(caughtUp: true)
        }
        // Release closures (and the objects they capture) on the loop thread.
        handlers.removeAll()
        timerWork.removeAll()
        loopThread.store(0, ordering: .relaxed)
        exitContinuation?.resume()
        exitContinuation = nil
    }

    /// Runs the work queued so far; work it submits waits for the next round.
    private func runSubmitted() {
        let batch = submitted.withLock { queue in
            defer { queue.work.removeAll(keepingCapacity: true); queue.boundedCount = 0 }
            return queue.work
        }
        for work in batch { work() }
    }

    private var hasSubmittedWork: Bool { !submitted.withLock { $0.work.isEmpty } }

    private func runDueTimers() {
        let now = ContinuousClock.now
        while let first = timerHeap.first, first.deadline <= now {
            popTimer()
            if let work = timerWork.removeValue(forKey: first.id) { work() }
        }
    }

    private func nextTimeoutMilliseconds() -> Int32 {
        while let first = timerHeap.first, timerWork[first.id] == nil { popTimer() }
        if hasSubmittedWork { return 0 }
        guard let first = timerHeap.first else { return -1 }
        let remaining = ContinuousClock.now.duration(to: first.deadline)
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(min(milliseconds, 60_000))
    }

    private func popTimer() {
        timerHeap.swapAt(0, timerHeap.count - 1)
        timerHeap.removeLast()
        siftDown(0)
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard timerHeap[child].deadline < timerHeap[parent].deadline else { return }
            timerHeap.swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = parent * 2 + 1
            let right = left + 1
            var smallest = parent
            if left < timerHeap.count, timerHeap[left].deadline < timerHeap[smallest].deadline { smallest = left }
            if right < timerHeap.count, timerHeap[right].deadline < timerHeap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            timerHeap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
