/// Tasks that prefer the loop (`Task(executorPreference: loop)`) run their
/// jobs on its thread, between I/O events: a request's work and its
/// response's write need no hand-off between threads.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        if !execute({ job.runSynchronously(on: executor) }) {
            // The loop has exited: the job still runs, on the shared pool.
            globalConcurrentExecutor.enqueue(job)
        }
    }
}
