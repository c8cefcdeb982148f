/// A token bucket over the streams a server's peer makes end in a reset
/// before our answer is out, whoever sent the RST_STREAM: the peer (which
/// nghttp2 counts itself) or nghttp2 on our side, for a frame the peer got
/// wrong on purpose (a WINDOW_UPDATE of 0, DATA past the window: the
/// "MadeYouReset" attack, CVE-2025-8671, which nghttp2 1.52 does not
/// count). Each such stream may have started work (a handler's Task), so
/// a peer that provokes them without bound makes the server work without
/// bound. `burstMax` resets at once, refilled at `refillPerSecond`; when
/// none is left the connection ends with GOAWAY(ENHANCE_YOUR_CALM).
/// Pure: the clock is passed in.
struct StreamResetBudget {
    let burstMax: Int
    let refillPerSecond: Int
    /// In thousandths of a reset, so that a refill of `refillPerSecond`
    /// resets a second is exact for each whole millisecond.
    private var availableMilliresets: Int64
    private var refilledAt: ContinuousClock.Instant

    init(burstMax: Int, refillPerSecond: Int, now: ContinuousClock.Instant) {
        precondition(burstMax > 0 && refillPerSecond >= 0, "StreamResetBudget: a burst above zero, a refill not below")
        self.burstMax = burstMax
        self.refillPerSecond = refillPerSecond
        availableMilliresets = Int64(burstMax) * 1000
        refilledAt = now
    }

    /// Resets left now, whole ones only (for tests and logs).
    func available(now: ContinuousClock.Instant) -> Int {
        var copy = self
        copy.refill(now: now)
        return Int(copy.availableMilliresets / 1000)
    }

    /// Takes one reset; false when none is left (and nothing is taken).
    mutating func spend(now: ContinuousClock.Instant) -> Bool {
        refill(now: now)
        guard availableMilliresets >= 1000 else { return false }
        availableMilliresets -= 1000
        return true
    }

    private mutating func refill(now: ContinuousClock.Instant) {
        guard now > refilledAt else { return }
        let capacity = Int64(burstMax) * 1000
        let (seconds, attoseconds) = (now - refilledAt).components
        // Long enough to fill the bucket from empty (or no refill at all):
        // no arithmetic on the whole span, which could be years.
        guard refillPerSecond > 0, seconds < Int64(burstMax) / Int64(refillPerSecond) + 1 else {
            if refillPerSecond > 0 { availableMilliresets = capacity }
            refilledAt = now
            return
        }
        // Whole milliseconds only; the rest counts at the next refill.
        let elapsedMilliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        guard elapsedMilliseconds > 0 else { return }
        refilledAt = refilledAt.advanced(by: .milliseconds(elapsedMilliseconds))
        availableMilliresets = min(capacity, availableMilliresets + elapsedMilliseconds * Int64(refillPerSecond))
        assert(availableMilliresets >= 0, "StreamResetBudget: never below empty")
    }
}
