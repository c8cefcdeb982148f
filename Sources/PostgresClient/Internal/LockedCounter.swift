import Foundation

/// An Int behind a lock.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func withLock<Result>(_ body: (inout Int) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
