import Contracts
@testable import Gateway
import RPCCore
import RPCRuntime
import Synchronization
import XCTest

/// `BalanceReadBatcher` against a real RPC server standing in for
/// PointsService (balances from a table the test sets; calls recorded; the
/// first call can be held open so later reads queue behind it).
final class BalanceReadBatcherTests: XCTestCase {
    private var server: BalanceServer!
    private var client: RPCClient!

    override func setUp() async throws {
        server = BalanceServer()
        let port = try server.start()
        client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)])
    }

    override func tearDown() async throws {
        server.releaseHeldCall()
        await client?.close()
        await server?.stop()
    }

    private let users = (0..<6).map { _ in UUID().uuidString.lowercased() }

    /// One call in flight, as the gateway runs it, whatever its limit says.
    private func batcher(
        readTimeout: Duration = .seconds(10), slotHoldMax: Duration = .seconds(10),
        catchUp: BalanceReadBatcher.CatchUp? = nil, observed: ObservedCalls? = nil
    ) -> BalanceReadBatcher {
        BalanceReadBatcher(
            caller: client, readTimeout: readTimeout, slotHoldMax: slotHoldMax,
            callsInFlightMax: 1, catchUp: catchUp
        ) { reads in
            observed?.record(reads)
        }
    }

    /// Starts a read of `userId` in a task; its balance or its status code.
    private func startRead(_ batcher: BalanceReadBatcher, _ userId: String) -> Task<Result<Int64, RPCError>, Never> {
        Task {
            do {
                let response = try await batcher.balance(userId: userId, metadata: Metadata())
                XCTAssertEqual(response.userId, userId, "a read was answered with another user's balance")
                return .success(response.balance)
            } catch {
                return .failure(RPCError.from(error))
            }
        }
    }

    /// Holds the next call open, starts `first`, and waits until the server has it.
    private func holdFirstRead(_ batcher: BalanceReadBatcher, _ first: String) async throws -> Task<
        Result<Int64, RPCError>, Never
    > {
        server.holdNextCall()
        let task = startRead(batcher, first)
        try await waitUntil("the first call reached the server") { self.server.calls.count == 1 }
        return task
    }

    private func waitUntil(_ what: String, _ condition: @escaping () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return XCTFail("timed out waiting until \(what)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    func testALoneReadMakesOneGetBalanceCall() async throws {
        server.setBalance(users[0], 42)
        let result = await startRead(batcher(), users[0]).value
        XCTAssertEqual(try result.get(), 42)
        XCTAssertEqual(server.calls, [.single(users[0])])
    }

    func testReadsArrivingWhileACallRunsShareTheNextCallEachUserOnce() async throws {
        for (index, user) in users.enumerated() { server.setBalance(user, Int64(100 + index)) }
        let observed = ObservedCalls()
        let batcher = batcher(observed: observed)
        let first = try await holdFirstRead(batcher, users[0])
        let queued = [users[1], users[2], users[3], users[1], users[4]]
        let reads = queued.map { startRead(batcher, $0) }
        try await waitUntil("five reads wait") { batcher.waitingReads == 5 }
        server.releaseHeldCall()
        let firstBalance = try await first.value.get()
        XCTAssertEqual(firstBalance, 100)
        var answers: [Int64] = []
        for read in reads { answers.append(try await read.value.get()) }
        XCTAssertEqual(answers, [101, 102, 103, 101, 104])
        XCTAssertEqual(
            server.sortedCalls, [.single(users[0]), .batch([users[1], users[2], users[3], users[4]].sorted())])
        XCTAssertEqual(observed.reads, [4])
    }

    /// After a call, its slot waits for the catch-up: reads that arrive
    /// meanwhile (as requests read with the answer do) share the next call
    /// with the one that waited during the call, instead of riding one after it.
    func testReadsArrivingBeforeTheCatchUpShareTheNextCall() async throws {
        for (index, user) in users.enumerated() { server.setBalance(user, Int64(100 + index)) }
        let gate = CatchUpGate()
        let batcher = batcher(catchUp: { await gate.pass() })
        server.holdEveryCall()
        let first = startRead(batcher, users[0])
        try await waitUntil("the first call reached the server") { self.server.calls.count == 1 }
        let second = [users[1], users[2]].map { startRead(batcher, $0) }
        try await waitUntil("two reads wait") { batcher.waitingReads == 2 }
        server.releaseHeldCall()
        try await waitUntil("the second call reached the server") { self.server.calls.count == 2 }
        let duringSecond = startRead(batcher, users[3])
        try await waitUntil("a read waits behind the second call") { batcher.waitingReads == 1 }
        server.releaseHeldCall()
        try await waitUntil("the second call's slot waits for the catch-up") { gate.waiting }
        let beforeCatchUp = [users[4], users[5]].map { startRead(batcher, $0) }
        try await waitUntil("three reads wait") { batcher.waitingReads == 3 }
        XCTAssertEqual(server.calls.count, 2, "a call left before the catch-up")
        gate.open()
        try await waitUntil("the third call reached the server") { self.server.calls.count == 3 }
        server.releaseHeldCall()
        var answers: [Int64] = [try await first.value.get()]
        for read in second + [duringSecond] + beforeCatchUp { answers.append(try await read.value.get()) }
        XCTAssertEqual(answers, [100, 101, 102, 103, 104, 105])
        XCTAssertEqual(
            server.sortedCalls,
            [
                .single(users[0]), .batch([users[1], users[2]].sorted()),
                .batch([users[3], users[4], users[5]].sorted()),
            ])
    }

    func testWaitingReadsOfOneUserShareAGetBalanceCall() async throws {
        server.setBalance(users[1], 7)
        let batcher = batcher()
        let first = try await holdFirstRead(batcher, users[0])
        let reads = (0..<3).map { _ in startRead(batcher, users[1]) }
        try await waitUntil("three reads wait") { batcher.waitingReads == 3 }
        server.releaseHeldCall()
        _ = await first.value
        for read in reads {
            let answer = try await read.value.get()
            XCTAssertEqual(answer, 7)
        }
        XCTAssertEqual(server.calls, [.single(users[0]), .single(users[1])])
    }

    /// A read must not share a call sent before it arrived: that call may
    /// have read the row before a write the user has already seen.
    func testAReadNeverJoinsACallAlreadySent() async throws {
        server.setBalance(users[0], 100)
        let batcher = batcher()
        let first = try await holdFirstRead(batcher, users[0])
        server.setBalance(users[0], 40)  // a spend committed after the first call read the row
        let second = startRead(batcher, users[0])
        try await waitUntil("the second read waits") { batcher.waitingReads == 1 }
        server.releaseHeldCall()
        let firstBalance = try await first.value.get()
        XCTAssertEqual(firstBalance, 100)
        let secondBalance = try await second.value.get()
        XCTAssertEqual(secondBalance, 40)
        XCTAssertEqual(server.calls, [.single(users[0]), .single(users[0])])
    }

    func testAFailedCallIsTheAnswerOfEachOfItsReads() async throws {
        let batcher = batcher()
        let first = try await holdFirstRead(batcher, users[0])
        let reads = [users[1], users[2]].map { startRead(batcher, $0) }
        try await waitUntil("two reads wait") { batcher.waitingReads == 2 }
        server.failBatches(with: RPCError(code: .unavailable, message: "database unavailable"))
        server.releaseHeldCall()
        _ = await first.value
        for read in reads {
            guard case .failure(let error) = await read.value else {
                return XCTFail("a read of a failed call succeeded")
            }
            XCTAssertEqual(error.code, .unavailable)
        }
        XCTAssertEqual(
            server.sortedCalls, [.single(users[0]), .batch([users[1], users[2]].sorted())], "no read was retried alone")
    }

    /// INVALID_ARGUMENT may concern one user id only: each read then asks alone.
    func testAnInvalidArgumentSendsEachReadAlone() async throws {
        server.setBalance(users[1], 11)
        let batcher = batcher()
        let first = try await holdFirstRead(batcher, users[0])
        let reads = [users[1], "not-a-uuid"].map { startRead(batcher, $0) }
        try await waitUntil("two reads wait") { batcher.waitingReads == 2 }
        server.releaseHeldCall()
        _ = await first.value
        let balance = try await reads[0].value.get()
        XCTAssertEqual(balance, 11)
        guard case .failure(let error) = await reads[1].value else { return XCTFail("a malformed user id was read") }
        XCTAssertEqual(error.code, .invalidArgument)
        XCTAssertEqual(server.calls.count, 4)
        XCTAssertEqual(server.sortedCalls.prefix(2), [.single(users[0]), .batch([users[1], "not-a-uuid"].sorted())])
        XCTAssertEqual(Set(server.calls.suffix(2)), [.single(users[1]), .single("not-a-uuid")])
    }

    /// A PointsService built before GetBalances refuses it (UNIMPLEMENTED
    /// without internal authentication, PERMISSION_DENIED with it): the
    /// reads are then answered one by one, as before the upgrade.
    func testAPointsServiceWithoutGetBalancesStillAnswersEveryRead() async throws {
        for refusal in [RPCError.Code.unimplemented, .permissionDenied] {
            server.reset()
            server.setBalance(users[1], 21)
            server.setBalance(users[2], 22)
            server.failBatches(with: RPCError(code: refusal, message: "unknown method"))
            let batcher = batcher()
            let first = try await holdFirstRead(batcher, users[0])
            let reads = [users[1], users[2]].map { startRead(batcher, $0) }
            try await waitUntil("two reads wait") { batcher.waitingReads == 2 }
            server.releaseHeldCall()
            _ = await first.value
            var answers: [Int64] = []
            for read in reads { answers.append(try await read.value.get()) }
            XCTAssertEqual(answers, [21, 22], "\(refusal)")
            XCTAssertEqual(Set(server.calls.suffix(2)), [.single(users[1]), .single(users[2])], "\(refusal)")
        }
    }

    /// A slow call holds its slot only so long: the reads queued behind it
    /// go out in the next call and are answered while it still runs.
    func testASlowCallHandsItsSlotOnAfterTheHoldLimit() async throws {
        server.setBalance(users[1], 5)
        server.setBalance(users[2], 6)
        let batcher = batcher(slotHoldMax: .milliseconds(300))
        let first = try await holdFirstRead(batcher, users[0])
        let reads = [users[1], users[2]].map { startRead(batcher, $0) }
        try await waitUntil("two reads wait") { batcher.waitingReads == 2 }
        try await waitUntil("the next call went out while the slow one runs") { self.server.calls.count == 2 }
        if server.calls.count < 2 { server.releaseHeldCall() }  // failed above: let the reads finish
        var answers: [Int64] = []
        for read in reads { answers.append(try await read.value.get()) }
        XCTAssertEqual(answers, [5, 6])
        XCTAssertEqual(server.sortedCalls, [.single(users[0]), .batch([users[1], users[2]].sorted())])
        // The slow call still answers its read once the server lets it go.
        server.setBalance(users[0], 9)
        server.releaseHeldCall()
        let firstBalance = try await first.value.get()
        XCTAssertEqual(firstBalance, 0, "read before the write above")
    }

    /// A queued read keeps its own deadline: it does not get a fresh read
    /// timeout when its call finally starts.
    func testAQueuedReadFailsByItsOwnDeadline() async throws {
        let timeout = Duration.seconds(1)
        let batcher = batcher(readTimeout: timeout)
        let startedAt = ContinuousClock.now
        server.holdEveryCall()
        let first = startRead(batcher, users[0])
        try await waitUntil("the first call reached the server") { self.server.calls.count == 1 }
        let second = startRead(batcher, users[1])
        for read in [first, second] {
            guard case .failure(let error) = await read.value else { return XCTFail("a held read succeeded") }
            XCTAssertEqual(error.code, .deadlineExceeded)
        }
        // Fresh timeouts per call would take two: about 2 s.
        XCTAssertLessThan(ContinuousClock.now - startedAt, timeout * 1.7)
    }
}

/// A catch-up the test opens: closed, each pass waits until `open`; then
/// every pass goes through at once.
private final class CatchUpGate: Sendable {
    private let state = Mutex((isOpen: false, waiters: [CheckedContinuation<Void, Never>]()))

    /// Whether a pass waits now.
    var waiting: Bool { state.withLock { !$0.waiters.isEmpty } }

    func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The users of each GetBalances call, as the batcher's observer saw them.
private final class ObservedCalls: Sendable {
    private let calls = Mutex<[Int]>([])
    var reads: [Int] { calls.withLock { $0 } }
    func record(_ reads: Int) { calls.withLock { $0.append(reads) } }
}

/// A stand-in PointsService for the batcher: GetBalance and GetBalances
/// answered from a table (zero for users not in it), every call recorded.
private final class BalanceServer: Sendable {
    typealias Call = BalanceTable.Call
    let table = BalanceTable()
    private let server: RPCServer

    init() {
        var router = Router()
        router.register(PointsMethods.getBalance) { [table] message, _ in
            try await table.answer(.single(message.userId), [message.userId])[0]
        }
        router.register(PointsMethods.getBalances) { [table] message, _ in
            var response = GetBalancesResponse()
            response.balances = try await table.answer(.batch(message.userIds), message.userIds)
            return response
        }
        server = RPCServer(configuration: .init(listen: .init(host: "127.0.0.1", port: 0)), router: router)
    }

    func start() throws -> Int { try server.start() }
    func stop() async { await server.shutdown(gracePeriod: .seconds(1)) }

    var calls: [Call] { table.calls }
    /// The calls, each batch's ids sorted.
    var sortedCalls: [Call] { table.calls.map(\.sorted) }
    func setBalance(_ userId: String, _ balance: Int64) { table.setBalance(userId, balance) }
    func holdNextCall() { table.holdNextCall() }
    func holdEveryCall() { table.holdEveryCall() }
    func failBatches(with error: RPCError) { table.failBatches(with: error) }
    func releaseHeldCall() { table.releaseHeldCall() }
    func reset() { table.reset() }
}

/// The stand-in's balances, its record of calls and its controls.
private final class BalanceTable: Sendable {
    enum Call: Hashable, Sendable {
        case single(String)
        case batch([String])

        /// A batch's ids sorted (concurrent reads queue in any order).
        var sorted: Call {
            if case .batch(let ids) = self { return .batch(ids.sorted()) }
            return self
        }
    }

    private struct State {
        var balances: [String: Int64] = [:]
        var calls: [Call] = []
        var holdNext = false
        var holdEvery = false
        var held: [CheckedContinuation<Void, Never>] = []
        var batchFailure: RPCError?
    }

    private let state = Mutex(State())

    var calls: [Call] { state.withLock { $0.calls } }
    func setBalance(_ userId: String, _ balance: Int64) { state.withLock { $0.balances[userId] = balance } }
    func holdNextCall() { state.withLock { $0.holdNext = true } }
    func holdEveryCall() { state.withLock { $0.holdEvery = true } }
    func failBatches(with error: RPCError) { state.withLock { $0.batchFailure = error } }
    /// Forgets balances, calls and failures (nothing may be held).
    func reset() { state.withLock { $0 = State() } }

    func releaseHeldCall() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.held = [] }
            state.holdNext = false
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// Records the call, reads the table, then waits if told to hold it;
    /// "not-a-uuid" is refused as PointsService refuses it.
    func answer(_ call: Call, _ userIds: [String]) async throws -> [GetBalanceResponse] {
        let (balances, hold, failure) = state.withLock { state -> ([GetBalanceResponse], Bool, RPCError?) in
            state.calls.append(call)
            let hold = state.holdNext || state.holdEvery
            state.holdNext = false
            var failure: RPCError?
            if case .batch = call { failure = state.batchFailure }
            return (
                userIds.map { userId in
                    var response = GetBalanceResponse()
                    response.userId = userId
                    response.balance = state.balances[userId] ?? 0
                    return response
                }, hold, failure
            )
        }
        if let failure { throw failure }
        if let index = userIds.firstIndex(of: "not-a-uuid") {
            throw RPCError(code: .invalidArgument, message: "user_ids[\(index)]: not a UUID")
        }
        if hold {
            await withCheckedContinuation { continuation in state.withLock { $0.held.append(continuation) } }
        }
        return balances
    }
}
