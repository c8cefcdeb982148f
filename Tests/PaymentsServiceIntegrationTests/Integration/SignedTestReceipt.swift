import Foundation
import TestSupport

/// Real StoreKit 1 app receipts for PaymentsService's tests: Apple's payload
/// (Receipt Fields: a SET of `SEQUENCE { type, version, OCTET STRING }`)
/// written in DER, then signed by `openssl cms -sign -nodetach -binary`
/// with a throwaway P-256 key, as `Tests/AppReceiptTests` does (a smaller
/// DER writer here: that target's builders are internal to it). The
/// commands run through `Command.run` off the cooperative pool.
final class SignedTestReceipt: Sendable {
    static let openssl = "/usr/bin/openssl"
    let directory: URL
    private var keyPath: String { directory.appendingPathComponent("key.pem").path }
    private var certificatePath: String { directory.appendingPathComponent("certificate.pem").path }

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("payments-receipts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", keyPath, "-out", certificatePath, "-subj", "/CN=PaymentsReceiptTests", "-days", "1",
        ])
    }

    func removeFiles() { try? FileManager.default.removeItem(at: directory) }

    /// The base64 `receiptData` of a signed receipt listing `transactionIds`
    /// (each with `productId`) for `bundleId`.
    func base64(bundleId: String, transactionIds: [String], productId: String = "com.meeyao.qianwen.popular_pack") async throws -> String {
        let payload = Self.payload(bundleId: bundleId, transactionIds: transactionIds, productId: productId)
        return Data(try await sign(payload)).base64EncodedString()
    }

    static func payload(bundleId: String, transactionIds: [String], productId: String) -> [UInt8] {
        var attributes = [
            attribute(0, utf8("ProductionSandbox")), attribute(2, utf8(bundleId)), attribute(3, utf8("1.0.3")),
            attribute(4, octets([0xD1, 0xBC, 0xFE, 0xCF])), attribute(5, octets([UInt8](repeating: 0xA5, count: 20))),
            attribute(12, ia5("2026-11-30T10:00:00Z")), attribute(19, utf8("1.0")),
        ]
        for transactionId in transactionIds {
            attributes.append(attribute(17, set([
                attribute(1701, integer(1)), attribute(1702, utf8(productId)), attribute(1703, utf8(transactionId)),
                attribute(1704, ia5("2026-11-30T09:00:00Z")), attribute(1705, utf8(transactionId)),
            ])))
        }
        return set(attributes)
    }

    private func sign(_ payload: [UInt8]) async throws -> [UInt8] {
        let name = UUID().uuidString
        let input = directory.appendingPathComponent("\(name).der").path
        let output = directory.appendingPathComponent("\(name).p7").path
        try Data(payload).write(to: URL(fileURLWithPath: input))
        defer {
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: output)
        }
        try await run(["cms", "-sign", "-md", "sha256", "-nodetach", "-binary", "-outform", "DER", "-in", input,
                       "-signer", certificatePath, "-inkey", keyPath, "-out", output])
        return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    private func run(_ arguments: [String]) async throws {
        let log = directory.appendingPathComponent("openssl-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let status = try await offPool { try Command.run([Self.openssl] + arguments, outputPath: log, errorPath: log) }
        guard status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw ServiceProcessError(description: "openssl \(arguments.prefix(2).joined(separator: " ")) exited \(status): \(output)")
        }
    }

    // MARK: DER

    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] { sequence([integer(type), integer(1), octets(value)]) }
    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static func octets(_ bytes: [UInt8]) -> [UInt8] { tlv(0x04, bytes) }
    static func sequence(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static func set(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }) }

    static func integer(_ value: Int64) -> [UInt8] {
        var octets = withUnsafeBytes(of: value.bigEndian, Array.init)
        while octets.count > 1, (octets[0] == 0x00 && octets[1] & 0x80 == 0) || (octets[0] == 0xFF && octets[1] & 0x80 != 0) {
            octets.removeFirst()
        }
        return tlv(0x02, octets)
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        guard content.count >= 0x80 else { return [tag, UInt8(content.count)] + content }
        var length: [UInt8] = []
        var remaining = content.count
        while remaining > 0 {
            length.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        }
        return [tag, 0x80 | UInt8(length.count)] + length + content
    }
}
