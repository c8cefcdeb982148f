import Locking

/// Keeps lines in memory (for tests).
public final class MemorySink: LogSink {
    private let lines = Mutex<[String]>([])

    public init() {}

    public func write(line: String) { lines.withLock { $0.append(line) } }

    /// Every line written so far, oldest first.
    public var allLines: [String] { lines.withLock { $0 } }
}
