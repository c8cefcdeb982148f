import Glibc

/// Writes each line and its newline to standard error in one `writev(2)`
/// (lines from many threads never interleave).
public struct StandardErrorSink: LogSink {
    public init() {}

    public func write(line: String) { write(utf8Line: Array(line.utf8)) }

    public func write(utf8Line: [UInt8]) {
        var newline: UInt8 = 0x0A
        utf8Line.withUnsafeBytes { line in
            withUnsafeMutableBytes(of: &newline) { end in
                var parts = [iovec(iov_base: UnsafeMutableRawPointer(mutating: line.baseAddress), iov_len: line.count),
                             iovec(iov_base: end.baseAddress, iov_len: 1)]
                var first = 0
                while first < parts.count {
                    let written = parts.withUnsafeBufferPointer { Glibc.writev(2, $0.baseAddress! + first, Int32(parts.count - first)) }
                    if written < 0 { if errno == EINTR { continue } else { return } }
                    // Skip what was written; a short write resumes inside the part it stopped in.
                    var left = written
                    while first < parts.count, left >= parts[first].iov_len { left -= parts[first].iov_len; first += 1 }
                    if first < parts.count, left > 0 {
                        parts[first].iov_base = parts[first].iov_base.map { $0 + left }
                        parts[first].iov_len -= left
                    }
                }
            }
        }
    }
}
