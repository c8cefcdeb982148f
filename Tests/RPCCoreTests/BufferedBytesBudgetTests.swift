import RPCCore
import XCTest

/// The per-connection count of request bytes held for streams, without I/O.
final class BufferedBytesBudgetTests: XCTestCase {
    func testAdmitUpToTheBoundThenRefuse() {
        var budget = BufferedBytesBudget(bytesMax: 100)
        XCTAssertTrue(budget.admit(60, stream: 1))
        XCTAssertTrue(budget.admit(40, stream: 3), "exactly the bound fits")
        XCTAssertEqual(budget.bytesHeld, 100)
        XCTAssertFalse(budget.admit(1, stream: 5))
        XCTAssertFalse(budget.admit(1, stream: 1))
        XCTAssertEqual(budget.bytesHeld, 100, "a refusal counts nothing")
        XCTAssertEqual(budget.bytesHeld(stream: 5), 0)
    }

    func testReleaseFreesOnlyThatStream() {
        var budget = BufferedBytesBudget(bytesMax: 100)
        XCTAssertTrue(budget.admit(30, stream: 1))
        XCTAssertTrue(budget.admit(20, stream: 1))
        XCTAssertTrue(budget.admit(50, stream: 3))
        budget.release(stream: 1)
        XCTAssertEqual(budget.bytesHeld, 50)
        XCTAssertEqual(budget.bytesHeld(stream: 1), 0)
        XCTAssertEqual(budget.bytesHeld(stream: 3), 50)
        XCTAssertTrue(budget.admit(50, stream: 5), "released bytes are room again")
        XCTAssertEqual(budget.streamsHoldingBytes, 2)
    }

    func testReleaseOfAStreamHoldingNothingChangesNothing() {
        var budget = BufferedBytesBudget(bytesMax: 10)
        XCTAssertTrue(budget.admit(10, stream: 1))
        budget.release(stream: 7)
        budget.release(stream: 1)
        budget.release(stream: 1)
        XCTAssertEqual(budget.bytesHeld, 0)
        XCTAssertEqual(budget.streamsHoldingBytes, 0)
    }

    func testEmptyChunksAlwaysFitAndHoldNothing() {
        var budget = BufferedBytesBudget(bytesMax: 0)
        XCTAssertTrue(budget.admit(0, stream: 1))
        XCTAssertEqual(budget.streamsHoldingBytes, 0)
        XCTAssertFalse(budget.admit(1, stream: 1))
    }

    func testBoundIsRaisedToFitOneLargestMessage() {
        var budget = BufferedBytesBudget(bytesMax: 10, bytesMin: 105)
        XCTAssertEqual(budget.bytesMax, 105)
        XCTAssertTrue(budget.admit(105, stream: 1))
        XCTAssertFalse(budget.admit(1, stream: 3))
    }

    /// HTTPServer's bound can be Int.max (its body limits times its streams, saturated).
    func testUnboundedBudgetAdmitsWithoutOverflow() {
        var budget = BufferedBytesBudget(bytesMax: Int.max)
        XCTAssertTrue(budget.admit(Int.max / 2, stream: 1))
        XCTAssertTrue(budget.admit(Int.max / 2, stream: 3))
        XCTAssertFalse(budget.admit(Int.max, stream: 5))
        XCTAssertEqual(budget.bytesHeld, Int.max / 2 * 2)
    }

    /// Seeded random admits and releases: the total is always the sum of
    /// the streams' counts and never passes the bound.
    func testRandomSequencesKeepTheBooksAndTheBound() {
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<200 {
            var budget = BufferedBytesBudget(bytesMax: 1000)
            var model: [Int32: Int] = [:]
            for _ in 0..<200 {
                let stream = Int32(generator.next() % 8) * 2 + 1
                if generator.next() % 4 == 0 {
                    budget.release(stream: stream)
                    model[stream] = nil
                } else {
                    let count = Int(generator.next() % 300)
                    let fits = model.values.reduce(0, +) + count <= 1000
                    XCTAssertEqual(budget.admit(count, stream: stream), fits)
                    if fits && count > 0 { model[stream, default: 0] += count }
                }
                XCTAssertEqual(budget.bytesHeld, model.values.reduce(0, +))
                XCTAssertLessThanOrEqual(budget.bytesHeld, 1000)
                XCTAssertEqual(budget.bytesHeld(stream: stream), model[stream] ?? 0)
            }
        }
    }
}

/// A small deterministic generator (SplitMix64) for seeded sequences.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
