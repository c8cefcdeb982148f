@testable import Gateway
import XCTest

/// `CallSlots` alone, on a clock the test moves: which calls start, when a
/// slow call's slot is handed on (once), and when the watchdog runs.
final class CallSlotsTests: XCTestCase {
    private typealias Slots = CallSlots<String>
    private let t0 = ContinuousClock.now
    private let hold = Duration.milliseconds(25)

    private func slots(inFlight: Int = 1, waiting: Int = 100) -> Slots {
        Slots(holdMax: hold, batchSizeMax: 64, batchesInFlightMax: inFlight, waitingMax: waiting)
    }

    private func call(_ step: Slots.Step) -> ([String], Slots.CallID)? {
        if case .call(let items, let id) = step { return (items, id) }
        return nil
    }

    func testALoneItemTakesTheFreeSlotAndTheNextOnesWaitForItsEnd() throws {
        var slots = slots()
        let first = try XCTUnwrap(slots.takeFreeSlot(now: t0))
        XCTAssertNil(slots.takeFreeSlot(now: t0))
        guard case .none = slots.submit("b", now: t0) else { return XCTFail("b did not wait") }
        guard case .none = slots.submit("c", now: t0) else { return XCTFail("c did not wait") }
        XCTAssertEqual(slots.waitingCount, 2)
        let next = try XCTUnwrap(call(slots.callEnded(first, now: t0 + .milliseconds(1))))
        XCTAssertEqual(next.0, ["b", "c"])
        XCTAssertNotEqual(next.1, first)
        XCTAssertEqual(slots.callsHoldingSlots, 1)
        guard case .none = slots.callEnded(next.1, now: t0 + .milliseconds(2)) else { return XCTFail("nothing waited") }
        XCTAssertEqual(slots.callsHoldingSlots, 0)
        XCTAssertNotNil(slots.takeFreeSlot(now: t0 + .milliseconds(3)))
    }

    func testTheWatchdogHandsOnASlowCallsSlotOnceAndOnlyPastTheLimit() throws {
        var slots = slots()
        let slow = try XCTUnwrap(slots.takeFreeSlot(now: t0))
        XCTAssertTrue(slots.claimWatchdogStart())
        _ = slots.submit("b", now: t0 + .milliseconds(1))
        let early = slots.watchdogWoke(now: t0 + hold - .milliseconds(1))
        XCTAssertTrue(early.steps.isEmpty)
        XCTAssertEqual(early.wakeAt, t0 + hold)
        let late = slots.watchdogWoke(now: t0 + hold)
        XCTAssertEqual(late.steps.count, 1)
        let next = try XCTUnwrap(call(late.steps[0]))
        XCTAssertEqual(next.0, ["b"])
        XCTAssertEqual(late.wakeAt, t0 + hold + hold, "the next call started when the slot was handed on")
        // The slow call ends later: its slot was handed on already.
        guard case .none = slots.callEnded(slow, now: t0 + .seconds(1)) else {
            return XCTFail("a slot was handed on twice")
        }
        XCTAssertEqual(slots.callsHoldingSlots, 1)
        _ = slots.submit("c", now: t0 + .seconds(1))
        XCTAssertEqual(slots.waitingCount, 1, "c waits: one call still holds the only slot")
        let after = try XCTUnwrap(call(slots.callEnded(next.1, now: t0 + .seconds(1))))
        XCTAssertEqual(after.0, ["c"])
    }

    func testOneWatchdogRunsOnlyWhileACallHoldsASlot() throws {
        var slots = slots(inFlight: 2)
        XCTAssertFalse(slots.claimWatchdogStart(), "no call: no watchdog")
        let a = try XCTUnwrap(slots.takeFreeSlot(now: t0))
        XCTAssertTrue(slots.claimWatchdogStart())
        let b = try XCTUnwrap(slots.takeFreeSlot(now: t0 + .milliseconds(5)))
        XCTAssertFalse(slots.claimWatchdogStart(), "one runs already")
        XCTAssertEqual(slots.watchdogWoke(now: t0 + .milliseconds(10)).wakeAt, t0 + hold, "wakes for the oldest call")
        _ = slots.callEnded(a, now: t0 + .milliseconds(11))
        XCTAssertEqual(slots.watchdogWoke(now: t0 + .milliseconds(12)).wakeAt, t0 + .milliseconds(5) + hold)
        _ = slots.callEnded(b, now: t0 + .milliseconds(13))
        let idle = slots.watchdogWoke(now: t0 + .milliseconds(14))
        XCTAssertNil(idle.wakeAt, "no call holds a slot: the watchdog stops")
        XCTAssertFalse(slots.watchdogRunning)
        _ = try XCTUnwrap(slots.takeFreeSlot(now: t0 + .milliseconds(20)))
        XCTAssertTrue(slots.claimWatchdogStart(), "a new call starts a new watchdog")
    }

    func testAFullQueueSendsAnItemAlone() throws {
        var slots = slots(waiting: 1)
        _ = try XCTUnwrap(slots.takeFreeSlot(now: t0))
        guard case .none = slots.submit("b", now: t0) else { return XCTFail("b did not wait") }
        guard case .alone(let item) = slots.submit("c", now: t0) else { return XCTFail("c was queued past the bound") }
        XCTAssertEqual(item, "c")
        XCTAssertEqual(slots.callsHoldingSlots, 1, "an item alone holds no slot")
    }
}
