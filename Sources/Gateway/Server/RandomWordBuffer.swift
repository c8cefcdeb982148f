#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// 64-bit words from the kernel's random generator (/dev/urandom), fetched
/// `capacity` at a time: request ids need fresh randomness for every
/// request, and a getrandom(2) per word, as the standard library's
/// generator makes, was a measured share of the gateway's work per request
/// (docs/PERFORMANCE.md, "Session 10").
final class RandomWordBuffer: Sendable {
    /// The process's buffer.
    static let shared = RandomWordBuffer()

    private struct Words {
        var words: [UInt64]
        var next: Int
    }

    private let state: Mutex<Words>

    init(capacity: Int = 64) {
        precondition(capacity > 0)
        state = Mutex(Words(words: Array(repeating: 0, count: capacity), next: capacity))
    }

    /// The next unused word; each word is handed out once.
    func next() -> UInt64 {
        state.withLock { buffer in
            if buffer.next == buffer.words.count {
                Self.fill(&buffer.words)
                buffer.next = 0
            }
            defer { buffer.next += 1 }
            return buffer.words[buffer.next]
        }
    }

    private static func fill(_ words: inout [UInt64]) {
        let filled = words.withUnsafeMutableBytes { raw -> Bool in
            let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
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
