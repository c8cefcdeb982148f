#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: its name and `errno`.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let errorNumber: Int32

    public init(call: String, errorNumber: Int32) {
        self.call = call
        self.errorNumber = errorNumber
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errorNumber))) (errno \(errorNumber))"
    }
}

/// Each system call wrapped once: retries `EINTR`, turns -1 into `SystemError`.
enum Syscall {
    @discardableResult
    static func call<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(call: name, errorNumber: code)
        }
    }
}
