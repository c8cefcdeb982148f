import Foundation
import Locking
import PostgresClient
import ServiceKit

/// Commits concurrent writes together (group commit): under load, the
/// writes that arrive while earlier batches run are carried by one
/// statement (`Write.execute`), so a batch pays one round trip, one plan and
/// one commit instead of one each. A lone write starts at once and waits
/// for nobody.
///
/// Which writes go together is `BatchQueue`'s decision; this type
/// only carries it out. A batch is all or nothing: when its statement fails
/// for any reason (a replayed event id among the items, a lost connection, a
/// timeout), every item of the batch is answered `.runAlone`, and its
/// caller runs it through the single path, which decides replays,
/// conflicts and retries for it as before.
public final class CommitBatcher<Write: BatchedWrite>: Sendable {
    /// How a submitted write ended.
    public enum Answer: Sendable {
        case outcome(Write.Outcome)
        /// The batch failed or the queue was full: run it on its own.
        case runAlone

        var isRunAlone: Bool {
            if case .runAlone = self { return true }
            return false
        }
    }

    /// A write waiting for its batch, and where its answer goes.
    struct Submission: Sendable {
        let item: Write.Item
        let answer: CheckedContinuation<Answer, Never>
    }

    /// Told of every statement: the writes it carried, and whether it
    /// failed (metrics; tests count batches through it too).
    public typealias Observer = @Sendable (_ writes: Int, _ failed: Bool) -> Void

    private let pool: PostgresPool
    private let queue: Mutex<BatchQueue<Submission>>
    private let observer: Observer?
    /// Where the batches' tasks run (nil: the cooperative pool).
    private let executor: (any TaskExecutor)?

    /// `executor`: run the batches' tasks there, e.g. the event loop the
    /// callers and the pool's sockets use (docs/ARCHITECTURE.md, "Tasks on a loop").
    public init(
        pool: PostgresPool, limits: CommitBatchLimits, observer: Observer? = nil, executor: (any TaskExecutor)? = nil
    ) {
        self.pool = pool
        self.observer = observer
        self.executor = executor
        queue = Mutex(
            BatchQueue(
                batchSizeMax: limits.batchSizeMax, batchesInFlightMax: limits.batchesInFlightMax,
                waitingMax: limits.waitingMax, extraBatchWaitingMin: limits.extraBatchWaitingMin
            ) {
                Write.keys($0.item)
            })
    }

    /// Waits for the batch that carries `item`; never throws (a failed
    /// batch answers `.runAlone`). With a slot free it runs at once, on the
    /// caller's own task (no hop to another task when there is no load).
    public func submit(_ item: Write.Item) async -> Answer {
        if queue.withLock({ $0.startIfSlotFree() }) {
            return await execute([item])[0]
        }
        return await withCheckedContinuation { continuation in
            carryOut(queue.withLock { $0.submit(Submission(item: item, answer: continuation)) })
        }
    }

    private func carryOut(_ action: BatchQueue<Submission>.Action) {
        switch action {
        case .run(let batch):
            Task(executorPreference: executor) { await self.run(batch) }
        case .runAlone(let submission):
            submission.answer.resume(returning: .runAlone)
        case .wait, .none:
            break
        }
    }

    /// Runs a batch of waiting writes and answers them.
    private func run(_ batch: [Submission]) async {
        let answers = await execute(batch.map(\.item))
        for (submission, answer) in zip(batch, answers) {
            submission.answer.resume(returning: answer)
        }
    }

    /// Runs one batch in a slot already taken, hands the slot on, and
    /// returns one answer per item.
    private func execute(_ items: [Write.Item]) async -> [Answer] {
        let answers: [Answer]
        do {
            let outcomes = try await pool.withConnection { connection in
                // The statement is its own transaction: dying here is dying before the commit.
                if let fault = Write.beforeCommitFault { FaultInjection.hit(fault) }
                return try await Write.execute(items, on: connection)
            }
            precondition(outcomes.count == items.count, "one outcome per batched write")
            answers = outcomes.map(Answer.outcome)
        } catch {
            answers = Array(repeating: .runAlone, count: items.count)
        }
        observer?(items.count, answers.first?.isRunAlone == true)
        carryOut(queue.withLock { $0.batchFinished() })
        return answers
    }
}
