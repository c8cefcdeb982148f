/// Carries a loop-confined value through `@Sendable` closures. Reading or
/// writing it off its loop traps in debug builds; that check is what makes
/// the unchecked conformance sound.
public struct LoopBound<Value>: @unchecked Sendable {
    private let storage: Value
    public let loop: EventLoop

    public init(_ value: Value, loop: EventLoop) {
        loop.assertInEventLoop()
        self.storage = value
        self.loop = loop
    }

    private init(storage: Value, loop: EventLoop) {
        self.storage = storage
        self.loop = loop
    }

    public var value: Value {
        loop.assertInEventLoop()
        return storage
    }
}

extension LoopBound {
    /// Wraps a value created off the loop that no other thread can reach yet;
    /// from now on it is used on `loop` only.
    init(_ value: Value, uncheckedOnCreation loop: EventLoop) {
        self.init(storage: value, loop: loop)
    }
}
