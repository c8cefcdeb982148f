/// Why `EventLoop.submit` refused new work. Nothing of the work ran.
public enum EventLoopSubmissionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The loop has exited (or is exiting): nothing more runs on it.
    case loopStopped
    /// `submissionsQueuedMax` pieces of work already wait for the loop; the
    /// caller sheds this one (the loop is stalled or far behind).
    case queueFull(submissionsQueuedMax: Int)

    public var description: String {
        switch self {
        case .loopStopped: "the event loop has stopped"
        case .queueFull(let max): "the event loop already has \(max) submissions queued"
        }
    }
}
