import Foundation

/// One dedicated OS thread that runs blocking jobs in order, so libpq's
/// blocking calls never occupy Swift's cooperative pool. Each connection owns
/// one worker; the thread ends after `stop()` once queued jobs have run.
final class BlockingWorker: @unchecked Sendable {
    // `condition` guards `jobs` and `isStopping`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var jobsStart = 0
    private var isStopping = false

    /// Worker threads currently alive, process-wide (tests check nothing leaks).
    static var liveThreadCount: Int { liveThreads.withLock { $0 } }
    private static let liveThreads = LockedCounter()

    init(name: String) {
        Self.liveThreads.withLock { $0 += 1 }
        let thread = Thread { [self] in
            self.runLoop()
            Self.liveThreads.withLock { $0 -= 1 }
        }
        thread.name = name
        thread.stackSize = 512 * 1024
        thread.start()
    }

    /// Queues a job; jobs submitted after `stop()` are still run before the thread ends.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` on the worker thread and resumes the caller with its result.
    func run<Value: Sendable>(_ body: @escaping @Sendable () -> Result<Value, PostgresError>) async throws(PostgresError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, PostgresError>, Never>) in
            submit { continuation.resume(returning: body()) }
        }
        return try result.get()
    }

    func stop() {
        condition.lock()
        isStopping = true
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        while true {
            condition.lock()
            while jobsStart == jobs.count && !isStopping { condition.wait() }
            if jobsStart == jobs.count {
                condition.unlock()
                return
            }
            let job = jobs[jobsStart]
            jobsStart += 1
            if jobsStart == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                jobsStart = 0
            }
            condition.unlock()
            job()
        }
    }
}
