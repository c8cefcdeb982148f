import ServiceKit

/// The background half of the saga: claims rows whose pending step is due
/// (leased with `FOR UPDATE SKIP LOCKED`, so any number of instances can run
/// it) and runs them, so a purchase is credited even if the app never calls
/// again and a refund is taken back even if PointsService was down.
struct SagaWorker: Sendable {
    let runner: LedgerStepRunner
    let pollInterval: Duration

    func run() async {
        while !Task.isCancelled {
            let claimed: [PaymentRecord]
            do {
                claimed = try await runner.store.claimDue(limit: PaymentsLimits.workerConcurrencyMax)
            } catch {
                runner.logger.warning("saga worker cannot claim work", ["error": "\(error)"])
                claimed = []
            }
            if !claimed.isEmpty {
                // Every claimed row starts now, inside its lease.
                await withTaskGroup(of: Void.self) { group in
                    for record in claimed { group.addTask { _ = await runner.runOwedSteps(record) } }
                }
            }
            // A full batch means more may be due: go again at once.
            if claimed.count < PaymentsLimits.workerConcurrencyMax {
                try? await Task.sleep(for: pollInterval)
            }
        }
    }
}
