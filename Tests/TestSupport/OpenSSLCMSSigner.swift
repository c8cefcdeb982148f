import CryptoPrimitives
import Foundation

/// Signs payloads as CMS SignedData the way the App Store ships a receipt
/// (content attached, binary, DER) with `openssl cms -sign`, as a signer
/// given in PEM: its certificate and key, and the certificates the
/// SignedData carries beside it (an intermediate). Synchronous (run it
/// through `offPool` from a task); files live in a temporary directory
/// until `removeFiles`.
public final class OpenSSLCMSSigner: Sendable {
    public static let openssl = "/usr/bin/openssl"
    public let directory: URL
    private let certificatePath: String
    private let keyPath: String
    private let carriedPath: String?

    public init(certificatePEM: String, keyPEM: String, carriedCertificatesPEM: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cms-signer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificatePath = directory.appendingPathComponent("certificate.pem").path
        keyPath = directory.appendingPathComponent("key.pem").path
        try certificatePEM.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try keyPEM.write(toFile: keyPath, atomically: true, encoding: .utf8)
        if let carriedCertificatesPEM {
            let path = directory.appendingPathComponent("carried.pem").path
            try carriedCertificatesPEM.write(toFile: path, atomically: true, encoding: .utf8)
            carriedPath = path
        } else {
            carriedPath = nil
        }
    }

    /// A signer from the PEM text of a CA shaped like Apple's (certificates
    /// root, intermediate, leaf, ... then their keys in the same order, as
    /// `LocalTestingCertificateAuthority.exportPEM()` writes): the leaf
    /// signs, and the intermediate is carried unless `carryingIntermediate`
    /// is false.
    public convenience init(appleShapedAuthorityPEM text: String, carryingIntermediate: Bool = true) throws {
        let blocks = try PEMBlock.blocks(in: text)
        let certificates = blocks.filter { $0.label == "CERTIFICATE" }
        let keys = blocks.filter { $0.label.hasSuffix("PRIVATE KEY") }
        guard certificates.count >= 3, keys.count >= 3 else {
            throw ServiceProcessError(description: "not a root, intermediate and leaf with their keys")
        }
        try self.init(
            certificatePEM: certificates[2].text, keyPEM: keys[2].text,
            carriedCertificatesPEM: carryingIntermediate ? certificates[1].text : nil)
    }

    /// A self-signed P-256 signer (no Apple markers, trusted by nobody).
    public static func selfSigned() throws -> OpenSSLCMSSigner {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cms-self-signed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("certificate.pem").path
        try run(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", certificate, "-subj", "/CN=SelfSignedReceiptSigner", "-days", "1",
            ], in: directory)
        return try OpenSSLCMSSigner(
            certificatePEM: try String(contentsOfFile: certificate, encoding: .utf8),
            keyPEM: try String(contentsOfFile: key, encoding: .utf8))
    }

    deinit { removeFiles() }

    /// Removes the keys, certificates and the directory (a signer kept in a
    /// `static` is never deinitialised: its test class calls this from
    /// `class func tearDown`).
    public func removeFiles() { try? FileManager.default.removeItem(at: directory) }

    /// How to sign: `cms` with DER output, `cms -stream` (BER, indefinite
    /// lengths), `smime` (PKCS #7), or `cms` detached (no eContent).
    public enum Mode: Sendable { case cms, cmsStreamed, smime, cmsDetached }

    /// `payload` signed (`-binary`: the bytes as they are) in `mode` with
    /// the digest `digest` (an `openssl -md` name), and by `cosigner` too
    /// when given (a second SignerInfo, its carried certificates added).
    public func sign(
        _ payload: [UInt8], _ mode: Mode = .cms, digest: String = "sha256",
        cosigner: OpenSSLCMSSigner? = nil
    ) throws -> [UInt8] {
        let name = UUID().uuidString
        let input = directory.appendingPathComponent("\(name).der").path
        let output = directory.appendingPathComponent("\(name).p7").path
        let carriedTogether = directory.appendingPathComponent("\(name)-carried.pem").path
        try Data(payload).write(to: URL(fileURLWithPath: input))
        defer {
            for path in [input, output, carriedTogether] { try? FileManager.default.removeItem(atPath: path) }
        }
        var arguments = [mode == .smime ? "smime" : "cms", "-sign", "-md", digest]
        if mode != .cmsDetached { arguments.append("-nodetach") }
        if mode == .cmsStreamed { arguments.append("-stream") }
        arguments += [
            "-binary", "-outform", "DER", "-in", input, "-signer", certificatePath, "-inkey", keyPath, "-out", output,
        ]
        if let cosigner { arguments += ["-signer", cosigner.certificatePath, "-inkey", cosigner.keyPath] }
        let carried = [carriedPath, cosigner?.carriedPath].compactMap { $0 }
        if !carried.isEmpty {
            let text = try carried.map { try String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n")
            try text.write(toFile: carriedTogether, atomically: true, encoding: .utf8)
            arguments += ["-certfile", carriedTogether]
        }
        try Self.run(arguments, in: directory)
        return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    private static func run(_ arguments: [String], in directory: URL) throws {
        let log = directory.appendingPathComponent("openssl-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let status = try Command.run([openssl] + arguments, outputPath: log, errorPath: log)
        guard status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw ServiceProcessError(
                description: "openssl \(arguments.prefix(2).joined(separator: " ")) exited \(status): \(output)")
        }
    }
}
