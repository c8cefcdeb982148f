import Foundation
import TestSupport

/// Real PKCS #7 receipts from OpenSSL's command line: a throwaway P-256 key
/// and self-signed certificate made at start, then `openssl cms -sign`
/// over a payload (`-binary`, so the bytes are signed as they are). The
/// commands run through `Command.run` (posix_spawn + waitpid), from
/// synchronous tests, never on the cooperative pool.
final class OpenSSLSigner: Sendable {
    static let openssl = "/usr/bin/openssl"
    let directory: URL
    private var keyPath: String { directory.appendingPathComponent("key.pem").path }
    private var certificatePath: String { directory.appendingPathComponent("certificate.pem").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("app-receipt-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", keyPath, "-out", certificatePath, "-subj", "/CN=AppReceiptTests", "-days", "1",
        ])
    }

    deinit { removeFiles() }

    /// Removes the key, the certificate and the directory (a signer kept in
    /// a `static` is never deinitialised: its test class calls this from
    /// `class func tearDown`).
    func removeFiles() { try? FileManager.default.removeItem(at: directory) }

    /// How to sign: `cms` with DER output, `cms -stream` (BER, indefinite
    /// lengths), `smime` (PKCS #7), or `cms` detached (no eContent).
    enum Mode { case cms, cmsStreamed, smime, cmsDetached }

    func sign(_ payload: [UInt8], _ mode: Mode = .cms) throws -> [UInt8] {
        let name = UUID().uuidString
        let input = directory.appendingPathComponent("\(name).der").path
        let output = directory.appendingPathComponent("\(name).p7").path
        try Data(payload).write(to: URL(fileURLWithPath: input))
        var arguments: [String]
        switch mode {
        case .cms, .cmsStreamed, .cmsDetached: arguments = ["cms", "-sign", "-md", "sha256"]
        case .smime: arguments = ["smime", "-sign", "-md", "sha256"]
        }
        if mode != .cmsDetached { arguments.append("-nodetach") }
        if mode == .cmsStreamed { arguments.append("-stream") }
        arguments += ["-binary", "-outform", "DER", "-in", input, "-signer", certificatePath, "-inkey", keyPath, "-out", output]
        defer {
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: output)
        }
        try run(arguments)
        return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    private func run(_ arguments: [String]) throws {
        let log = directory.appendingPathComponent("openssl-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let status = try Command.run([Self.openssl] + arguments, outputPath: log)
        guard status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw OpenSSLFailure(description: "openssl \(arguments.prefix(2).joined(separator: " ")) exited \(status): \(output)")
        }
    }
}

struct OpenSSLFailure: Error, CustomStringConvertible {
    let description: String
}
