@testable import RPCRuntime

/// Queues a chain of steps on `loop`, each queued by the one before: the
/// first runs in the loop's next round, and `note` is told each step's name
/// as it runs (the loop-order tests compare where the steps fall).
func queueStepChain(on loop: EventLoop, _ steps: ArraySlice<String>, note: @escaping @Sendable (String) -> Void) {
    guard let step = steps.first else { return }
    loop.execute {
        note(step)
        queueStepChain(on: loop, steps.dropFirst(), note: note)
    }
}
