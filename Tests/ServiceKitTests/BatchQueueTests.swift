import Foundation
import ServiceKit
import TestSupport
import XCTest

/// The batch queue alone: which items start, wait, run together or alone.
final class BatchQueueTests: XCTestCase {
    private struct Item: Equatable {
        let user: UUID
        let event: String
    }

    private typealias Queue = BatchQueue<Item>

    private func queue(size: Int = 4, inFlight: Int = 1, waiting: Int = 100, extraAfter: Int = 1) -> Queue {
        Queue(batchSizeMax: size, batchesInFlightMax: inFlight, waitingMax: waiting, extraBatchWaitingMin: extraAfter) {
            [$0.user.uuidString, $0.event]
        }
    }

    private let users = (0..<8).map { _ in UUID() }

    private func item(_ user: Int, _ event: String) -> Item { Item(user: users[user], event: event) }

    private func batch(_ action: Queue.Action) -> [Item]? {
        if case .run(let items) = action { return items }
        return nil
    }

    func testALoneGrantStartsAtOnce() {
        var queue = queue()
        XCTAssertEqual(batch(queue.submit(item(0, "a"))), [item(0, "a")])
        XCTAssertEqual(queue.batchesInFlight, 1)
        guard case .none = queue.batchFinished() else { return XCTFail("nothing waits") }
        XCTAssertEqual(queue.batchesInFlight, 0)
    }

    func testGrantsArrivingWhileTheSlotsAreBusyWaitThenRunTogetherInArrivalOrder() {
        var queue = queue(size: 3, inFlight: 2)
        XCTAssertNotNil(batch(queue.submit(item(0, "a"))))
        XCTAssertNotNil(batch(queue.submit(item(1, "b"))))
        for (user, event) in [(2, "c"), (3, "d"), (4, "e"), (5, "f")] {
            guard case .wait = queue.submit(item(user, event)) else { return XCTFail("\(event) should wait") }
        }
        XCTAssertEqual(
            batch(queue.batchFinished()), [item(2, "c"), item(3, "d"), item(4, "e")], "up to the size, oldest first")
        XCTAssertEqual(queue.batchesInFlight, 2, "the freed slot went to the new batch")
        XCTAssertEqual(batch(queue.batchFinished()), [item(5, "f")])
        guard case .none = queue.batchFinished() else { return XCTFail("nothing waits") }
        guard case .none = queue.batchFinished() else { return XCTFail("nothing waits") }
        XCTAssertEqual(queue.batchesInFlight, 0)
    }

    func testAUserOrAnEventIdAlreadyInTheBatchWaitsForTheNextOneInOrder() {
        var queue = queue(size: 10)
        _ = queue.submit(item(0, "busy"))
        for (user, event) in [(1, "a1"), (1, "a2"), (2, "b1"), (3, "b1"), (1, "a3"), (4, "c1")] {
            _ = queue.submit(item(user, event))
        }
        XCTAssertEqual(batch(queue.batchFinished()), [item(1, "a1"), item(2, "b1"), item(4, "c1")])
        XCTAssertEqual(batch(queue.batchFinished()), [item(1, "a2"), item(3, "b1")])
        XCTAssertEqual(batch(queue.batchFinished()), [item(1, "a3")])
        guard case .none = queue.batchFinished() else { return XCTFail("nothing waits") }
    }

    func testAGrantTakesAFreeSlotWithoutQueueingAndOnlyAFreeOne() {
        var queue = queue(inFlight: 2)
        XCTAssertTrue(queue.startIfSlotFree())
        XCTAssertTrue(queue.startIfSlotFree())
        XCTAssertFalse(queue.startIfSlotFree(), "both slots are taken")
        XCTAssertEqual(queue.batchesInFlight, 2)
        guard case .wait = queue.submit(item(0, "a")) else { return XCTFail("no slot: it waits") }
        XCTAssertEqual(batch(queue.batchFinished()), [item(0, "a")], "a freed slot goes to the waiting grant")
        guard case .none = queue.batchFinished() else { return XCTFail("nothing waits") }
        XCTAssertTrue(queue.startIfSlotFree())
    }

    /// With `extraBatchWaitingMin`, a lone write still starts at once, but a
    /// second batch waits until that many writes wait, and a batch that ends
    /// while another runs hands its slot on only to that many.
    func testASecondBatchStartsOnlyOnceEnoughWritesWait() {
        var queue = queue(size: 8, inFlight: 2, extraAfter: 3)
        XCTAssertEqual(batch(queue.submit(item(0, "a"))), [item(0, "a")], "nothing runs: it starts at once")
        XCTAssertFalse(queue.startIfSlotFree(), "a slot is free, but a second batch waits for three writes")
        guard case .wait = queue.submit(item(1, "b")) else { return XCTFail("one waits") }
        guard case .wait = queue.submit(item(2, "c")) else { return XCTFail("two wait") }
        XCTAssertEqual(
            batch(queue.submit(item(3, "d"))), [item(1, "b"), item(2, "c"), item(3, "d")], "three wait: they start")
        XCTAssertEqual(queue.batchesInFlight, 2)
        guard case .wait = queue.submit(item(4, "e")) else { return XCTFail("both slots are taken") }
        guard case .none = queue.batchFinished() else { return XCTFail("one waits while a batch still runs") }
        XCTAssertEqual(queue.batchesInFlight, 1)
        guard case .wait = queue.submit(item(5, "f")) else { return XCTFail("two wait") }
        XCTAssertEqual(batch(queue.submit(item(6, "g"))), [item(4, "e"), item(5, "f"), item(6, "g")])
        guard case .wait = queue.submit(item(7, "h")) else { return XCTFail("both slots are taken") }
        guard case .none = queue.batchFinished() else { return XCTFail("one waits while a batch still runs") }
        XCTAssertEqual(batch(queue.batchFinished()), [item(7, "h")], "the last batch ended: whatever waits goes")
        guard case .none = queue.batchFinished() else { return XCTFail("nothing waits") }
        XCTAssertEqual(queue.batchesInFlight, 0)
    }

    func testAFullQueueSendsTheGrantOffAlone() {
        var queue = queue(inFlight: 1, waiting: 2)
        _ = queue.submit(item(0, "a"))
        _ = queue.submit(item(1, "b"))
        _ = queue.submit(item(2, "c"))
        guard case .runAlone(let alone) = queue.submit(item(3, "d")) else { return XCTFail("the queue is full") }
        XCTAssertEqual(alone, item(3, "d"))
        XCTAssertEqual(queue.waitingCount, 2)
    }

    /// Random arrivals and completions: every grant runs exactly once, no
    /// batch holds a user or an event id twice or more than the size, never
    /// more batches run than allowed, whatever the second batch waits for.
    func testRandomScheduleRunsEachGrantOnceInOrderPerUser() {
        var generator = SeededRandom(seed: 20_261_130)
        for _ in 0..<200 {
            let size = Int.random(in: 1...5, using: &generator)
            let inFlight = Int.random(in: 1...3, using: &generator)
            var queue = queue(
                size: size, inFlight: inFlight, waiting: Int.random(in: 0...6, using: &generator),
                extraAfter: Int.random(in: 1...4, using: &generator))
            var running: [[Item]] = []
            var ran: [Item] = []
            var submitted: [Item] = []
            func start(_ action: Queue.Action) {
                switch action {
                case .run(let items):
                    XCTAssertFalse(items.isEmpty)
                    XCTAssertLessThanOrEqual(items.count, size)
                    XCTAssertEqual(Set(items.map(\.user)).count, items.count)
                    XCTAssertEqual(Set(items.map(\.event)).count, items.count)
                    running.append(items)
                    XCTAssertLessThanOrEqual(running.count, inFlight)
                case .runAlone(let item): ran.append(item)
                case .wait, .none: break
                }
            }
            for step in 0..<60 {
                if running.isEmpty || Bool.random(using: &generator) {
                    let next = item(Int.random(in: 0..<4, using: &generator), "e\(step)")
                    submitted.append(next)
                    start(queue.submit(next))
                } else {
                    ran += running.remove(at: Int.random(in: 0..<running.count, using: &generator))
                    start(queue.batchFinished())
                }
                XCTAssertEqual(queue.batchesInFlight, running.count)
            }
            while !running.isEmpty {
                ran += running.removeFirst()
                start(queue.batchFinished())
            }
            XCTAssertEqual(queue.waitingCount, 0)
            XCTAssertEqual(ran.map(\.event).sorted(), submitted.map(\.event).sorted(), "each grant ran exactly once")
        }
    }

    func testOneUsersGrantsLeaveTheQueueInArrivalOrder() {
        var queue = queue(size: 2, inFlight: 1)
        _ = queue.submit(item(0, "first"))
        let arrivals = (1...6).map { item($0 % 2, "e\($0)") }
        for arrival in arrivals { _ = queue.submit(arrival) }
        var order: [Item] = []
        while let items = batch(queue.batchFinished()) { order += items }
        for user in [0, 1] {
            XCTAssertEqual(order.filter { $0.user == users[user] }, arrivals.filter { $0.user == users[user] })
        }
    }
}
