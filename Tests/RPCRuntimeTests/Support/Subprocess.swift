import Foundation

/// A child process whose first stdout line announces its address. Blocking
/// reads run on a dedicated thread, never on the cooperative pool.
final class AnnouncingProcess: @unchecked Sendable {
    let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()

    init(executable: String, arguments: [String]) {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
    }

    /// Starts the process and returns its first stdout line (bounded to 4 KiB).
    func start() async throws -> String {
        try process.run()
        let handle = stdoutPipe.fileHandleForReading
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var line: [UInt8] = []
                while line.count < 4096 {
                    let byte = handle.readData(ofLength: 1)
                    guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
                    line.append(first)
                }
                continuation.resume(returning: String(decoding: line, as: UTF8.self))
            }
        }
    }

    /// Closes stdin (the child exits when it sees EOF) and terminates it.
    func stop() {
        try? stdinPipe.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
    }
}

/// The repository root, found from this file's path.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}()
