// Shared by the libFuzzer harnesses in Fuzz/ (scripts/fuzz.sh compiles this
// file into each target's module). Not a SwiftPM target.

/// Checks an oracle. Unlike `precondition`, whose message -O drops, the
/// message is printed; the trap is what libFuzzer reports as a crash.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz oracle violated: " + message()) }
}

/// A small deterministic generator (xorshift64*) for the schedule a
/// harness derives from its input: where to split a stream, when to
/// advance a fake clock. Same input, same schedule.
struct FuzzSchedule {
    private var state: UInt64

    init(seed: UInt64) { state = 0x9E37_79B9_7F4A_7C15 ^ (seed &* 0x1000_0000_01B3) | 1 }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    /// A value in 0..<bound.
    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    /// Cuts `bytes` into consecutive pieces of 1...pieceBytesMax bytes.
    mutating func split<C: Collection>(_ bytes: C, pieceBytesMax: Int) -> [C.SubSequence] {
        var pieces: [C.SubSequence] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end =
                bytes.index(start, offsetBy: 1 + below(pieceBytesMax), limitedBy: bytes.endIndex) ?? bytes.endIndex
            pieces.append(bytes[start..<end])
            start = end
        }
        return pieces
    }
}

/// Reads an input front to back; past the end every read is zero, so any
/// input is a valid program.
struct FuzzInput {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint16() -> Int { Int(byte()) << 8 | Int(byte()) }

    /// Up to `count` bytes (fewer at the end).
    mutating func bytes(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, position + count)
        let start = min(position, end)
        position = end
        return bytes[start..<end]
    }

    /// Everything not read yet.
    mutating func rest() -> ArraySlice<UInt8> { bytes(bytes.count) }
}
