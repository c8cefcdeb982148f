// Imported in both builds: a module's own `Mutex` shadows the `Mutex` of a
// module it imports, so an expression `Mutex(...)` in a file that imports
// `Locking` and `Synchronization` (for `Atomic`) means this one. A type
// annotation there is still ambiguous in the TSan build: write it
// `Locking.Mutex<...>` (RequestAdmission does).
import Synchronization
#if TSAN_VISIBLE_LOCKS
import Glibc

/// A lock around a value, built on `pthread_mutex_t` so that
/// ThreadSanitizer sees each acquire and release. Compiled only with
/// `-DTSAN_VISIBLE_LOCKS` (`scripts/thread-check.sh`): the standard
/// library's `Mutex` is atomics and a futex in a module built without TSan's
/// instrumentation, so under TSan every access it protects reads as a race
/// (docs/MEMORY.md, "tsan"). Same `init` and `withLock` as that `Mutex`.
public final class Mutex<Value>: @unchecked Sendable {
    private var value: Value
    private let handle: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ initialValue: sending Value) {
        value = initialValue
        handle = .allocate(capacity: 1)
        handle.initialize(to: pthread_mutex_t())
        pthread_mutex_init(handle, nil)
    }

    deinit {
        pthread_mutex_destroy(handle)
        handle.deallocate()
    }

    /// Runs `body` with the value, the lock held.
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(handle)
        defer { pthread_mutex_unlock(handle) }
        return try body(&value)
    }
}
#else
/// The standard library's `Mutex`, under the name every module here uses.
/// Built with `-DTSAN_VISIBLE_LOCKS`, the name is a lock
/// ThreadSanitizer can see instead (above).
public typealias Mutex<Value: ~Copyable> = Synchronization.Mutex<Value>
#endif
