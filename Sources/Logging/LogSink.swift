/// Where log lines go; tests capture them to check what is (not) logged.
public protocol LogSink: Sendable {
    func write(line: String)
    /// The same line as UTF-8 (what `Logger` builds, handed over); by default decoded and passed to `write(line:)`.
    func write(utf8Line: consuming [UInt8])
}

extension LogSink {
    public func write(utf8Line: consuming [UInt8]) { write(line: String(decoding: utf8Line, as: UTF8.self)) }
}
