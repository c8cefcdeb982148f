@testable import PostgresClient
import XCTest

/// The pool's rules without a database: connections are plain integers.
final class PoolStateMachineTests: XCTestCase {
    private typealias Machine = PoolStateMachine<Int>

    private func acquire(_ machine: inout Machine, usable: Bool = true) -> Machine.AcquireAction {
        machine.acquire(isUsable: { _ in usable })
    }

    func testAcquireOpensUpToTheLimitThenQueuesThenRefuses() {
        var machine = Machine(connectionsMax: 2, waitersMax: 1)
        guard case .open = acquire(&machine), case .open = acquire(&machine) else {
            return XCTFail("expected two opens")
        }
        guard case .wait(let id) = acquire(&machine) else { return XCTFail("expected to wait") }
        XCTAssertEqual(id, 0)
        guard case .failExhausted(let waiting) = acquire(&machine) else { return XCTFail("expected exhausted") }
        XCTAssertEqual(waiting, 1)
        XCTAssertEqual(machine.openCount, 2)
        XCTAssertEqual(machine.peakOpenCount, 2)
    }

    func testReleaseHandsOverInArrivalOrderThenParks() {
        var machine = Machine(connectionsMax: 1, waitersMax: 10)
        _ = acquire(&machine)
        guard case .wait(let first) = acquire(&machine), case .wait(let second) = acquire(&machine) else {
            return XCTFail()
        }
        guard case .handOver(7, let to1) = machine.release(7, broken: false) else {
            return XCTFail("expected hand-over")
        }
        XCTAssertEqual(to1, first)
        guard case .handOver(7, let to2) = machine.release(7, broken: false) else {
            return XCTFail("expected hand-over")
        }
        XCTAssertEqual(to2, second)
        guard case .park = machine.release(7, broken: false) else { return XCTFail("expected park") }
        guard case .use(7) = acquire(&machine) else { return XCTFail("expected the idle connection") }
    }

    func testWaiterThatLeftIsSkipped() {
        var machine = Machine(connectionsMax: 1, waitersMax: 10)
        _ = acquire(&machine)
        guard case .wait(let gone) = acquire(&machine), case .wait(let stays) = acquire(&machine) else {
            return XCTFail()
        }
        XCTAssertTrue(machine.waiterLeft(gone))
        XCTAssertFalse(machine.waiterLeft(gone), "leaving twice is a no-op")
        XCTAssertEqual(machine.waiterCount, 1)
        guard case .handOver(_, let to) = machine.release(1, broken: false) else { return XCTFail() }
        XCTAssertEqual(to, stays)
        XCTAssertFalse(machine.waiterLeft(stays), "a served waiter cannot time out any more")
    }

    /// While no connection comes back (a hung database), callers time out
    /// one after another: their places in the order are dropped as they
    /// leave, not kept until the next release (8 bytes per caller, for ever).
    func testTheOrderOfWaitersStaysBoundedWhileNoneIsServed() {
        var machine = Machine(connectionsMax: 1, waitersMax: 100)
        _ = acquire(&machine)
        guard case .wait(let first) = acquire(&machine) else { return XCTFail() }
        for _ in 0..<50_000 {
            guard case .wait(let id) = acquire(&machine) else { return XCTFail() }
            XCTAssertTrue(machine.waiterLeft(id))
        }
        XCTAssertLessThanOrEqual(machine.waiterOrderCount, 2 * machine.waiterCount + 1_025)
        guard case .handOver(_, let to) = machine.release(1, broken: false) else { return XCTFail() }
        XCTAssertEqual(to, first, "the order of those still waiting is kept")
    }

    func testABrokenReleaseEvictsTheIdleConnections() {
        var machine = Machine(connectionsMax: 4, waitersMax: 10)
        for _ in 0..<3 { guard case .open = acquire(&machine) else { return XCTFail() } }
        guard case .park = machine.release(1, broken: false), case .park = machine.release(2, broken: false) else {
            return XCTFail()
        }
        XCTAssertEqual(machine.idle.count, 2)
        guard case .discard(false) = machine.release(3, broken: true) else { return XCTFail() }
        XCTAssertEqual(machine.idle.count, 0, "idle connections of a lost server are dropped, not handed out")
        XCTAssertEqual(machine.openCount, 0)
        guard case .open = acquire(&machine) else { return XCTFail("the next caller gets a fresh connection") }
    }

    func testBrokenReleaseFreesTheSlotAndOpensForAWaiter() {
        var machine = Machine(connectionsMax: 1, waitersMax: 10)
        _ = acquire(&machine)
        guard case .discard(let openForNobody) = machine.release(1, broken: true) else { return XCTFail() }
        XCTAssertFalse(openForNobody)
        XCTAssertEqual(machine.openCount, 0)

        _ = acquire(&machine)
        guard case .wait(let waiter) = acquire(&machine) else { return XCTFail() }
        guard case .discard(let openForWaiter) = machine.release(1, broken: true) else { return XCTFail() }
        XCTAssertTrue(openForWaiter)
        XCTAssertEqual(machine.openCount, 1, "the slot is reserved for the waiter's connection")
        guard case .handOver(2, let to) = machine.connectionOpenedForWaiter(2) else { return XCTFail() }
        XCTAssertEqual(to, waiter)
    }

    func testDeadIdleConnectionsAreDroppedOnAcquire() {
        var machine = Machine(connectionsMax: 2, waitersMax: 0)
        _ = acquire(&machine)
        _ = acquire(&machine)
        _ = machine.release(1, broken: false)
        _ = machine.release(2, broken: false)
        guard case .open = acquire(&machine, usable: false) else {
            return XCTFail("dead idle connections free their slots")
        }
        XCTAssertEqual(machine.openCount, 1)
        XCTAssertTrue(machine.idle.isEmpty)
    }

    func testConnectFailureFreesTheSlotAndFailsTheWaiterItServed() {
        var machine = Machine(connectionsMax: 1, waitersMax: 10)
        _ = acquire(&machine)
        guard case .wait(let first) = acquire(&machine), case .wait(let second) = acquire(&machine) else {
            return XCTFail()
        }
        // The direct opener failed: nobody is failed for it, a slot is reserved for the first waiter.
        let direct = machine.connectFailed(wasForWaiter: false)
        XCTAssertNil(direct.failWaiter)
        XCTAssertTrue(direct.openForWaiter)
        // That attempt fails too: the first waiter gets the error, the next attempt serves the second.
        let forWaiter = machine.connectFailed(wasForWaiter: true)
        XCTAssertEqual(forWaiter.failWaiter, first)
        XCTAssertTrue(forWaiter.openForWaiter)
        let last = machine.connectFailed(wasForWaiter: true)
        XCTAssertEqual(last.failWaiter, second)
        XCTAssertFalse(last.openForWaiter)
        XCTAssertEqual(machine.openCount, 0)
        XCTAssertEqual(machine.waiterCount, 0)
    }

    func testCloseFailsWaitersClosesIdleAndRefusesNewCallers() {
        var machine = Machine(connectionsMax: 2, waitersMax: 10)
        _ = acquire(&machine)
        _ = acquire(&machine)
        _ = machine.release(1, broken: false)
        _ = acquire(&machine)  // takes 1 again
        guard case .wait(let waiter) = acquire(&machine) else { return XCTFail() }
        _ = machine.release(1, broken: false)  // handed to the waiter
        guard case .wait(let stillWaiting) = acquire(&machine) else { return XCTFail() }
        let (idle, failing) = machine.close()
        XCTAssertEqual(idle, [])
        XCTAssertEqual(failing, [stillWaiting])
        XCTAssertNotEqual(waiter, stillWaiting)
        guard case .failClosed = acquire(&machine) else { return XCTFail() }
        guard case .discard(false) = machine.release(1, broken: false) else {
            return XCTFail("leased connections close on return")
        }
        guard case .discard(false) = machine.release(2, broken: false) else { return XCTFail() }
        XCTAssertEqual(machine.openCount, 0)
    }

    func testOpenCountNeverExceedsTheLimitUnderARandomWorkload() {
        var generator = SystemRandomNumberGenerator()
        var machine = Machine(connectionsMax: 4, waitersMax: 8)
        var leased: [Int] = []
        var waiting: [UInt64] = []
        var nextConnection = 0
        for _ in 0..<5_000 {
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                switch acquire(&machine) {
                case .use(let connection): leased.append(connection)
                case .open: nextConnection += 1; leased.append(nextConnection)
                case .wait(let id): waiting.append(id)
                case .failClosed: XCTFail("not closed")
                case .failExhausted: XCTAssertEqual(machine.waiterCount, 8)
                }
            case 1 where !leased.isEmpty:
                let connection = leased.removeLast()
                switch machine.release(connection, broken: Bool.random(using: &generator)) {
                case .handOver(let connection, let id):
                    waiting.removeAll { $0 == id }
                    leased.append(connection)
                case .park: break
                case .discard(let openForWaiter):
                    if openForWaiter {
                        nextConnection += 1
                        if case .handOver(let connection, let id) = machine.connectionOpenedForWaiter(nextConnection) {
                            waiting.removeAll { $0 == id }
                            leased.append(connection)
                        }
                    }
                }
            case 2 where !waiting.isEmpty:
                XCTAssertTrue(machine.waiterLeft(waiting.removeFirst()))
            default:
                break
            }
            XCTAssertLessThanOrEqual(machine.openCount, 4)
            XCTAssertEqual(machine.openCount, leased.count + machine.idle.count)
            XCTAssertEqual(machine.waiterCount, waiting.count)
        }
    }
}
