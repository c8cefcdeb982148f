import Synchronization

/// A `Double` updated without a lock: its bit pattern in an `Atomic<UInt64>`,
/// added to by compare-and-exchange. Relaxed ordering is enough: a scrape
/// needs each value, not an order between values.
struct AtomicDouble: ~Copyable, Sendable {
    private let bits: Atomic<UInt64>

    init(_ value: Double) {
        bits = Atomic(value.bitPattern)
    }

    func load() -> Double {
        Double(bitPattern: bits.load(ordering: .relaxed))
    }

    func store(_ value: Double) {
        bits.store(value.bitPattern, ordering: .relaxed)
    }

    func add(_ amount: Double) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let desired = (Double(bitPattern: current) + amount).bitPattern
            let (exchanged, original) = bits.compareExchange(expected: current, desired: desired, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
