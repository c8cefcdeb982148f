/// Where log lines go; tests capture them to check what is (not) logged.
public protocol LogSink: Sendable {
    func write(line: String)
}
