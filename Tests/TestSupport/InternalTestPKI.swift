import Foundation

/// A throwaway CA and certificates for the services' internal mutual TLS,
/// made by `scripts/internal-pki.sh` (the same script `scripts/run.sh`
/// uses) in a temporary folder. `make` runs openssl as child processes:
/// call it off the cooperative pool (`makeOffPool`).
public struct InternalTestPKI: Sendable {
    /// Holds ca.pem and NAME.pem / NAME.key for every name asked for.
    public let directory: String

    /// The CA certificate (TLS_CLIENT_CA, POINTS_TLS_CA, BACKEND_TLS_CA_FILE).
    public var caPath: String { directory + "/ca.pem" }
    public func certificatePath(_ name: String) -> String { directory + "/\(name).pem" }
    public func keyPath(_ name: String) -> String { directory + "/\(name).key" }

    /// Makes a new CA and one certificate per spec: `NAME` (subjectAltName
    /// DNS:NAME) or `NAME=SAN` (an openssl subjectAltName value; empty for
    /// none), in `directory` (default: a new temporary folder). Blocking.
    public static func make(
        _ specs: [String], in directory: String = NSTemporaryDirectory() + "internal-pki-\(UUID().uuidString)"
    ) throws -> InternalTestPKI {
        let script = ServiceProcess.repositoryRoot.appendingPathComponent("scripts/internal-pki.sh").path
        let log = directory + ".log"
        let status = try Command.run(["/bin/bash", script, directory] + specs, outputPath: log)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        guard status == 0 else {
            throw ServiceProcessError(description: "internal-pki.sh failed (\(status)): \(output)")
        }
        return InternalTestPKI(directory: directory)
    }

    /// `make` on a dedicated thread.
    public static func makeOffPool(_ specs: [String], in directory: String? = nil) async throws -> InternalTestPKI {
        try await offPool { try directory.map { try make(specs, in: $0) } ?? make(specs) }
    }

    /// The settings of a service serving with mutual TLS as `name`: its
    /// certificate (also its client identity towards PointsService), the CA
    /// its callers' certificates must chain to, and PointsService's CA.
    public func serviceEnvironment(_ name: String) -> [String: String] {
        [
            "INTERNAL_AUTH": "mtls", "TLS_CERT": certificatePath(name), "TLS_KEY": keyPath(name),
            "TLS_CLIENT_CA": caPath, "POINTS_TLS_CA": caPath,
        ]
    }

    /// The gateway's settings towards the services, presenting `name`'s certificate.
    public func gatewayEnvironment(_ name: String = "gateway") -> [String: String] {
        [
            "INTERNAL_AUTH": "mtls", "BACKEND_TLS_CA_FILE": caPath, "BACKEND_TLS_CERT": certificatePath(name),
            "BACKEND_TLS_KEY": keyPath(name),
        ]
    }

    /// Deletes the folder, keys included.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
