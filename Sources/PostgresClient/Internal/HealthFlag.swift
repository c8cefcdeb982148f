import Foundation

/// A Bool readable from any thread without awaiting the actor.
final class HealthFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var storage = true

    var value: Bool { lock.withLock { storage } }

    func set(_ newValue: Bool) { lock.withLock { storage = newValue } }
}
