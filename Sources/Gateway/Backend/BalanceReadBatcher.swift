import Contracts
import Locking
import RPCCore
import RPCRuntime
import ServiceKit

/// Coalesces concurrent `GET /api/v1/points/balance` requests: the reads
/// that arrive while earlier calls run share one
/// `points.v1.Points/GetBalances` call, so under load PointsService answers
/// one call and runs one statement for many requests. A lone read calls
/// `GetBalance` at once and waits for nobody.
///
/// Which reads go together is `BatchQueue`'s decision (at most
/// `GatewayLimits.balanceReadCallsInFlightMax` calls at once, at most
/// `GatewayLimits.balanceReadsPerCallMax` users a call); this type carries
/// it out. When a call ends, its slot waits for `catchUp` (the gateway's
/// loop catching up, `EventLoop.caughtUp`) before it goes to the waiting
/// reads: the answered reads' responses are written and the requests that
/// arrived meanwhile are read first, so they ride the next call instead of
/// the one after it. Without it, 16 clients settled into two cohorts, 15
/// reads a call and then 1 (docs/PERFORMANCE.md, "Session 25"). A call
/// holds its slot until it ends or for
/// `GatewayLimits.balanceReadCallSlotHoldMax`, whichever comes first
/// (`CallSlots`, with one watchdog task while calls run, not a timer per
/// call), so a slow backend call never holds up the reads queued behind it
/// for long. Guarantees:
/// - **Fresh.** A read only ever joins a call not yet sent, so its answer
///   was read after the request arrived: a user who has just spent sees the
///   spend.
/// - **Each read's own deadline.** A read waits at most the read timeout
///   (`GatewayLimits.readTimeout`) in all; a call's timeout is the earliest
///   deadline among its reads, and a read whose deadline passed while it
///   waited fails `DEADLINE_EXCEEDED` without a call.
/// - **The same answers as alone.** A failed call's status is every one of
///   its reads' answer, except `INVALID_ARGUMENT` (a malformed user id,
///   which concerns one read only) and the refusals of a PointsService
///   older than GetBalances (`UNIMPLEMENTED`, `PERMISSION_DENIED`): then
///   each read makes its own `GetBalance` call and gets its own answer.
final class BalanceReadBatcher: Sendable {
    /// A read waiting for its call, and where its answer goes.
    struct Read: Sendable {
        let userId: String
        let metadata: Metadata
        let deadline: ContinuousClock.Instant
        let answer: CheckedContinuation<Answer, Never>
    }

    /// How a waiting read ended.
    enum Answer: Sendable {
        case balance(GetBalanceResponse)
        case failed(RPCError)
        /// Make the read's own `GetBalance` call (the queue was full, or the
        /// call failed for a reason that may concern one read only).
        case readAlone
    }

    /// Told of every GetBalances call: the distinct users it read.
    typealias Observer = @Sendable (_ reads: Int) -> Void

    private let caller: any UnaryCaller
    private let readTimeout: Duration
    private let readsPerCallMax: Int
    private let slots: Mutex<CallSlots<Read>>
    private let observer: Observer?
    /// Where the calls' tasks run (nil: the shared pool).
    private let callExecutor: (any TaskExecutor)?
    /// Awaited after each call, before its slot goes to the waiting reads
    /// (nil: the slot goes at once).
    private let catchUp: CatchUp?

    /// Returns once the reads that arrived with a call's answer have joined
    /// the queue (or a bounded time has passed).
    typealias CatchUp = @Sendable () async -> Void

    init(
        caller: any UnaryCaller,
        readTimeout: Duration = GatewayLimits.readTimeout,
        slotHoldMax: Duration = GatewayLimits.balanceReadCallSlotHoldMax,
        callsInFlightMax: Int = GatewayLimits.balanceReadCallsInFlightMax,
        readsPerCallMax: Int = GatewayLimits.balanceReadsPerCallMax,
        waitingMax: Int = GatewayLimits.balanceReadsWaitingMax,
        callExecutor: (any TaskExecutor)? = nil,
        catchUp: CatchUp? = nil,
        observer: Observer? = nil
    ) {
        self.caller = caller
        self.callExecutor = callExecutor
        self.catchUp = catchUp
        self.readTimeout = readTimeout
        self.readsPerCallMax = readsPerCallMax
        self.observer = observer
        slots = Mutex(
            CallSlots(
                holdMax: slotHoldMax, batchSizeMax: readsPerCallMax, batchesInFlightMax: callsInFlightMax,
                waitingMax: waitingMax))
    }

    /// The balance of `userId`, read after this call began. Throws what a
    /// `GetBalance` call throws.
    func balance(userId: String, metadata: Metadata) async throws -> GetBalanceResponse {
        let now = ContinuousClock.now
        let deadline = now + readTimeout
        let lone = slots.withLock { slots -> (CallSlots<Read>.CallID, Bool)? in
            slots.takeFreeSlot(now: now).map { ($0, slots.claimWatchdogStart()) }
        }
        if let (call, startWatchdog) = lone {
            if startWatchdog { startWatchdogTask() }
            defer { callEnded(call) }
            return try await readAlone(userId: userId, metadata: metadata, deadline: deadline)
        }
        let answer = await withCheckedContinuation { continuation in
            carryOut(
                locked {
                    $0.submit(
                        Read(userId: userId, metadata: metadata, deadline: deadline, answer: continuation), now: now)
                })
        }
        switch answer {
        case .balance(let response): return response
        case .failed(let error): throw error
        case .readAlone: return try await readAlone(userId: userId, metadata: metadata, deadline: deadline)
        }
    }

    /// Reads waiting for a call (tests).
    var waitingReads: Int { slots.withLock { $0.waitingCount } }

    private func readAlone(userId: String, metadata: Metadata, deadline: ContinuousClock.Instant) async throws
        -> GetBalanceResponse
    {
        var request = GetBalanceRequest()
        request.userId = userId
        return try await caller.call(
            PointsMethods.getBalance, request, metadata: metadata,
            timeout: Self.remaining(until: deadline))
    }

    /// Runs `body` on the slots and starts the watchdog if `body` left a
    /// call holding a slot with none running.
    private func locked(_ body: (inout CallSlots<Read>) -> CallSlots<Read>.Step) -> CallSlots<Read>.Step {
        let (step, startWatchdog) = slots.withLock { slots in (body(&slots), slots.claimWatchdogStart()) }
        if startWatchdog { startWatchdogTask() }
        return step
    }

    private func carryOut(_ step: CallSlots<Read>.Step) {
        switch step {
        case .call(let reads, let call):
            Task(executorPreference: callExecutor) {
                // The task that ran a call makes the next one too, when its
                // slot goes straight to waiting reads (no task per call).
                var next: (reads: [Read], call: CallSlots<Read>.CallID)? = (reads, call)
                while let (reads, call) = next {
                    await self.run(reads)
                    if let catchUp = self.catchUp, self.waitingReads < self.readsPerCallMax { await catchUp() }
                    next = nil
                    switch self.locked({ $0.callEnded(call, now: .now) }) {
                    case .call(let reads, let call): next = (reads, call)
                    case let step: self.carryOut(step)
                    }
                }
            }
        case .alone(let read):
            read.answer.resume(returning: .readAlone)
        case .none:
            break
        }
    }

    private func callEnded(_ call: CallSlots<Read>.CallID) {
        carryOut(locked { $0.callEnded(call, now: .now) })
    }

    /// Hands on the slots of calls past the hold limit, until no call holds one.
    private func startWatchdogTask() {
        Task(executorPreference: callExecutor) { [self] in
            var wakeAt: ContinuousClock.Instant? = ContinuousClock.now + slots.withLock { $0.holdMax }
            while let instant = wakeAt {
                try? await Task.sleep(until: instant, clock: .continuous)
                let woke = slots.withLock { $0.watchdogWoke(now: .now) }
                woke.steps.forEach(carryOut)
                wakeAt = woke.wakeAt
            }
        }
    }

    /// Answers a batch of waiting reads with one call.
    private func run(_ reads: [Read]) async {
        let now = ContinuousClock.now
        var live: [Read] = []
        for read in reads {
            if read.deadline <= now {
                read.answer.resume(returning: .failed(Self.expired))
            } else {
                live.append(read)
            }
        }
        guard let first = live.first, let deadline = live.map(\.deadline).min() else { return }
        let userIds = Self.distinct(live.map(\.userId))
        let answers: [String: GetBalanceResponse]
        do {
            answers = try await read(userIds, metadata: first.metadata, deadline: deadline)
        } catch {
            let failure = RPCError.from(error)
            // A failed GetBalance (one user) already is each of its reads' own answer.
            let alone = userIds.count > 1 && Self.readsAloneAfter.contains(failure.code)
            let answer: Answer = alone ? .readAlone : .failed(failure)
            for read in live { read.answer.resume(returning: answer) }
            return
        }
        for read in live {
            // `read` checked that every requested user was answered.
            read.answer.resume(returning: answers[read.userId].map(Answer.balance) ?? .readAlone)
        }
    }

    /// One call for `userIds` (distinct): GetBalance for one user,
    /// GetBalances for more. The answers by user id.
    private func read(_ userIds: [String], metadata: Metadata, deadline: ContinuousClock.Instant) async throws
        -> [String: GetBalanceResponse]
    {
        if userIds.count == 1 {
            return [userIds[0]: try await readAlone(userId: userIds[0], metadata: metadata, deadline: deadline)]
        }
        var request = GetBalancesRequest()
        request.userIds = userIds
        let response = try await caller.call(
            PointsMethods.getBalances, request, metadata: metadata,
            timeout: Self.remaining(until: deadline))
        observer?(userIds.count)
        guard response.balances.count == userIds.count else {
            throw RPCError(
                code: .internal,
                message: "GetBalances answered \(response.balances.count) balances for \(userIds.count) users")
        }
        var answers: [String: GetBalanceResponse] = [:]
        for (userId, balance) in zip(userIds, response.balances) {
            guard balance.userId == userId else {
                throw RPCError(code: .internal, message: "GetBalances answered its balances out of order")
            }
            answers[userId] = balance
        }
        return answers
    }

    /// A GetBalances call that failed with one of these is answered read by
    /// read with GetBalance: INVALID_ARGUMENT may concern one user id only;
    /// UNIMPLEMENTED and PERMISSION_DENIED are what a PointsService built
    /// before GetBalances answers (without and with internal
    /// authentication), so a gateway upgraded first keeps serving balances.
    private static let readsAloneAfter: Set<RPCError.Code> = [.invalidArgument, .unimplemented, .permissionDenied]

    private static let expired = RPCError(code: .deadlineExceeded, message: "the balance read waited past its deadline")

    private static func remaining(until deadline: ContinuousClock.Instant) -> Duration {
        max(.milliseconds(1), deadline - ContinuousClock.now)
    }

    /// `userIds` without repeats, in first-seen order.
    private static func distinct(_ userIds: [String]) -> [String] {
        var seen = Set<String>()
        return userIds.filter { seen.insert($0).inserted }
    }
}
