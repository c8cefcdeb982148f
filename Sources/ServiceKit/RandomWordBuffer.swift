#if canImport(Glibc)
import Glibc
#endif
import Locking

/// 64-bit words from the kernel's random generator (/dev/urandom), fetched
/// `capacity` at a time: request ids and new row ids need fresh randomness
/// for every request, and a getrandom(2) per word, as the standard
/// library's generator makes, was a measured share of the gateway's work
/// per request (docs/PERFORMANCE.md, "Session 10"); Foundation's `UUID()`
/// opens, reads and closes /dev/urandom each time ("Session 15"). The
/// device stays open for the process's life: one read(2) per refill.
public final class RandomWordBuffer: Sendable {
    /// The process's buffer.
    public static let shared = RandomWordBuffer()

    private struct Words {
        var words: [UInt64]
        var next: Int
        /// /dev/urandom once opened (-1 before, or when it cannot be).
        var device: Int32 = -1
    }

    private let state: Mutex<Words>

    public init(capacity: Int = 256) {
        precondition(capacity > 0)
        state = Mutex(Words(words: Array(repeating: 0, count: capacity), next: capacity))
    }

    deinit {
        state.withLock { buffer in
            if buffer.device >= 0 { close(buffer.device) }
        }
    }

    /// The next unused word; each word is handed out once.
    public func next() -> UInt64 {
        state.withLock { buffer in
            if buffer.next == buffer.words.count {
                if buffer.device < 0 { buffer.device = open("/dev/urandom", O_RDONLY | O_CLOEXEC) }
                Self.fill(&buffer.words, from: buffer.device)
                buffer.next = 0
            }
            defer { buffer.next += 1 }
            return buffer.words[buffer.next]
        }
    }

    private static func fill(_ words: inout [UInt64], from descriptor: Int32) {
        let filled = words.withUnsafeMutableBytes { raw -> Bool in
            guard descriptor >= 0 else { return false }
            var offset = 0
            while offset < raw.count {
                let count = read(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard !filled else { return }
        // No /dev/urandom (a bare chroot): the standard library's generator.
        var generator = SystemRandomNumberGenerator()
        for index in words.indices { words[index] = generator.next() }
    }
}
