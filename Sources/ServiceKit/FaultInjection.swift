import Foundation
import Glibc

/// Deterministic crash points for the crash-safety tests: when the
/// environment variable `FAULT_POINTS` (comma-separated names) names a point,
/// reaching it kills the process with SIGKILL, exactly as a crash or an
/// OOM kill would at that instant. Unset in every real deployment (the
/// services log a warning at start-up when it is set).
public enum FaultInjection {
    private static let armed: Set<String> = {
        let text = ProcessInfo.processInfo.environment["FAULT_POINTS"] ?? ""
        return Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }()

    /// The armed points (for the start-up warning).
    public static var armedPoints: Set<String> { armed }

    /// Dies here if `name` is armed.
    public static func hit(_ name: String) {
        guard !armed.isEmpty, armed.contains(name) else { return }
        kill(getpid(), SIGKILL)
        // SIGKILL cannot be caught; nothing after this line runs.
        while true { pause() }
    }
}
