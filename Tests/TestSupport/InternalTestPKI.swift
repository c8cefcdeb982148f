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
    /// none). Blocking.
    public static func make(_ specs: [String]) throws -> InternalTestPKI {
        let directory = NSTemporaryDirectory() + "internal-pki-\(UUID().uuidString)"
        let script = ServiceProcess.repositoryRoot.appendingPathComponent("scripts/internal-pki.sh").path
        let log = directory + ".log"
        let status = try Command.run(["/bin/bash", script, directory] + specs, outputPath: log)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        guard status == 0 else { throw ServiceProcessError(description: "internal-pki.sh failed (\(status)): \(output)") }
        return InternalTestPKI(directory: directory)
    }

    /// `make` on a dedicated thread.
    public static func makeOffPool(_ specs: [String]) async throws -> InternalTestPKI {
        try await offPool { try make(specs) }
    }

    /// The settings of a service serving with mutual TLS as `name`: its
    /// certificate (also its client identity towards PointsService) and
    /// the CA its callers' certificates must chain to.
    public func serviceEnvironment(_ name: String) -> [String: String] {
        ["INTERNAL_AUTH": "mtls", "TLS_CERT": certificatePath(name), "TLS_KEY": keyPath(name), "TLS_CLIENT_CA": caPath]
    }

    /// Deletes the folder, keys included.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The explicit switch for a cleartext internal RPC on 127.0.0.1 (refused
/// anywhere else): tests of service logic rather than of the transport set it.
public enum InternalAuthForTests {
    public static let cleartext = ["INTERNAL_AUTH": "off"]
}
