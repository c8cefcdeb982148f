import Foundation

/// One dedicated OS thread that runs blocking jobs in order, so libpq's
/// blocking calls never occupy Swift's cooperative pool. Each connection owns
/// one worker; the thread ends after `stop()` once queued jobs have run.
/// At most `jobsQueuedMax` jobs wait at once.
final class BlockingWorker: @unchecked Sendable {
    // `condition` guards `jobs`, `jobsStart` and `isStopping`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var jobsStart = 0
    private var isStopping = false

    /// The default for `jobsQueuedMax`. A connection serves one task at a
    /// time, so one job waits at most; more means it is shared by mistake.
    static let jobsQueuedMaxDefault = 8

    /// Most jobs waiting (not yet running) at once; `submit` refuses more.
    let jobsQueuedMax: Int

    /// Worker threads currently alive, process-wide (tests check nothing leaks).
    static var liveThreadCount: Int { liveThreads.withLock { $0 } }
    private static let liveThreads = LockedCounter()

    init(name: String, jobsQueuedMax: Int = BlockingWorker.jobsQueuedMaxDefault) {
        precondition(jobsQueuedMax > 0, "jobsQueuedMax must be positive")
        self.jobsQueuedMax = jobsQueuedMax
        Self.liveThreads.withLock { $0 += 1 }
        let thread = Thread { [self] in
            self.runLoop()
            Self.liveThreads.withLock { $0 -= 1 }
        }
        thread.name = name
        thread.stackSize = 512 * 1024
        thread.start()
    }

    /// Queues a job; jobs submitted after `stop()` are still run before the
    /// thread ends. Throws `connectionQueueFull`, dropping the job, when
    /// `jobsQueuedMax` jobs already wait.
    func submit(_ job: @escaping @Sendable () -> Void) throws(PostgresError) {
        condition.lock()
        defer { condition.unlock() }
        guard jobs.count - jobsStart < jobsQueuedMax else {
            throw PostgresError(code: .connectionQueueFull, message: "\(jobsQueuedMax) calls already wait on this connection")
        }
        jobs.append(job)
        condition.signal()
    }

    /// Runs `body` on the worker thread and resumes the caller with its result.
    func run<Value: Sendable>(_ body: @escaping @Sendable () -> Result<Value, PostgresError>) async throws(PostgresError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, PostgresError>, Never>) in
            do throws(PostgresError) {
                try submit { continuation.resume(returning: body()) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }

    /// Ends the thread once queued jobs have run.
    func stop() { stop(after: nil) }

    /// Queues `finalJob` (a handle's release: never refused, so never
    /// leaked) and ends the thread once it and the jobs before it have run.
    func stop(after finalJob: (@Sendable () -> Void)?) {
        condition.lock()
        if let finalJob { jobs.append(finalJob) }
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
