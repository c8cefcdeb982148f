/// Work that waits until the loop has caught up: it has handled every
/// descriptor that was ready and all work queued, so whatever arrived before
/// has had its turn. A loop multiplexing many clients around one backend
/// call uses it to let the requests that arrived with an answer join the
/// next call before it leaves (the gateway's `BalanceReadBatcher`).
extension EventLoop {
    /// Runs `work` on the loop once it has caught up (a look at the
    /// descriptors that does not block found none ready, and no work is
    /// queued), or once `limit` has passed, whichever comes first: a loop
    /// that is never idle still runs it, the limit checked each time round
    /// the loop. Safe from any thread. Returns false, dropping `work`, once
    /// the loop has exited; a loop that exits runs the waiting work first.
    @discardableResult
    public func whenCaughtUp(within limit: Duration, _ work: @escaping @Sendable () -> Void) -> Bool {
        let deadline = ContinuousClock.now + limit
        return execute { [self] in catchUpWaiters.append((deadline, work)) }
    }

    /// Returns once the loop has caught up, or after `limit` (see
    /// `whenCaughtUp`); at once when the loop has exited.
    public func caughtUp(within limit: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !whenCaughtUp(within: limit, { continuation.resume() }) { continuation.resume() }
        }
    }

    /// Loop thread only: runs every waiter when the loop has caught up,
    /// otherwise those whose limit has passed.
    func runCatchUpWaiters(caughtUp: Bool) {
        let now = ContinuousClock.now
        let isDue = { (waiter: (deadline: ContinuousClock.Instant, work: () -> Void)) in
            caughtUp || waiter.deadline <= now
        }
        let due = catchUpWaiters.filter(isDue)
        guard !due.isEmpty else { return }
        catchUpWaiters.removeAll(where: isDue)
        for waiter in due { waiter.work() }
    }
}
