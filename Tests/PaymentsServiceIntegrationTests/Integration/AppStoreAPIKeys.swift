import Foundation
import TestSupport

/// Throwaway App Store Connect-style keys (.p8: PKCS#8 PEM), made with the
/// openssl command line tool (installed with the project's dependencies).
enum AppStoreAPIKeys {
    static let keyID = "PAYTEST123"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"

    /// Writes a fresh key on `curve` (P-256 is what Apple issues) and returns its path and PEM text.
    static func write(curve: String = "P-256") async throws -> (path: String, pem: String) {
        let path = NSTemporaryDirectory() + "/AuthKey_\(UUID().uuidString).p8"
        let status = try await offPool {
            try Command.run([
                "/usr/bin/openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)", "-out",
                path,
            ])
        }
        guard status == 0, let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ServiceProcessError(description: "openssl genpkey failed (\(status))")
        }
        return (path, pem)
    }

    /// The base64 lines of a PEM (what must never reach a log).
    static func bodyLines(_ pem: String) -> [String] {
        pem.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") && $0.count >= 16 }
    }
}
