import AppStoreVerification
import Foundation

/// The demo's persisted local-testing CA: `ca.pem` (certificates and private
/// keys, mode 0600) and `root.pem` (the root certificate PaymentsService is
/// told to trust through APPLE_ROOT_CERTS).
struct DemoCertificateStore {
    let directory: String

    var bundlePath: String { directory + "/ca.pem" }
    var rootPath: String { directory + "/root.pem" }

    /// Creates the CA unless it exists; true when it wrote one.
    func create() throws -> Bool {
        let files = FileManager.default
        if files.fileExists(atPath: bundlePath) && files.fileExists(atPath: rootPath) {
            _ = try load()
            return false
        }
        try files.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Valid for ten years from yesterday, so a long-lived demo set-up keeps working.
        var options = LocalTestingCertificateAuthority.Options()
        options.validUntilSeconds = options.validFromSeconds + 10 * 365 * 86_400
        let authority = try LocalTestingCertificateAuthority(options: options)
        guard
            files.createFile(
                atPath: bundlePath, contents: Data(try authority.exportPEM().utf8),
                attributes: [.posixPermissions: 0o600]),
            files.createFile(
                atPath: rootPath, contents: Data(authority.rootPEM.utf8), attributes: [.posixPermissions: 0o644])
        else { throw WalkthroughFailure(description: "cannot write \(directory)") }
        return true
    }

    func load() throws -> LocalTestingCertificateAuthority {
        guard let data = FileManager.default.contents(atPath: bundlePath) else {
            throw WalkthroughFailure(
                description: "\(bundlePath) is missing: run `Demo init-ca --out \(directory)` first")
        }
        return try LocalTestingCertificateAuthority(importingPEM: String(decoding: data, as: UTF8.self))
    }
}
