import Glibc

/// Writes each line and its newline to standard error in one `write(2)`
/// (lines from many threads never interleave).
public struct StandardErrorSink: LogSink {
    public init() {}

    public func write(line: String) { write(utf8Line: Array(line.utf8)) }

    /// The newline goes onto the handed-over buffer itself, so a line from
    /// `Logger` is not copied again.
    public func write(utf8Line: consuming [UInt8]) {
        var bytes = utf8Line
        bytes.append(0x0A)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }
}
