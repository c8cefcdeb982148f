import AppStoreVerification
import Foundation
import TestSupport

/// StoreKit 1 app receipts for PaymentsService's tests: Apple's payload
/// (Receipt Fields: a SET of `SEQUENCE { type, version, OCTET STRING }`)
/// written in DER, then signed with `openssl cms -sign` (`OpenSSLCMSSigner`)
/// by the leaf of a cluster's Apple-shaped test CA, whose root the cluster
/// trusts for receipts (`APPLE_RECEIPT_ROOT_CERTS`), or by a self-signed
/// stranger. A smaller DER writer than `Tests/AppReceiptTests`' (whose
/// builders are internal to that target).
final class SignedTestReceipt: Sendable {
    private let signer: OpenSSLCMSSigner

    /// Signs as `authority`'s leaf, carrying its intermediate.
    init(authority: LocalTestingCertificateAuthority) throws {
        signer = try OpenSSLCMSSigner(appleShapedAuthorityPEM: try authority.exportPEM())
    }

    /// Signs as a self-signed certificate no deployment trusts.
    init(selfSigned: Void) async throws {
        signer = try await offPool { try OpenSSLCMSSigner.selfSigned() }
    }

    func removeFiles() { signer.removeFiles() }

    /// The base64 `receiptData` of a signed receipt listing `transactionIds`
    /// (each with `productId`) for `bundleId`, created `creationDate` (nil:
    /// without one; the default is now, inside the test CA's validity).
    func base64(
        bundleId: String, transactionIds: [String], productId: String = "com.meeyao.qianwen.popular_pack",
        creationDate: String? = SignedTestReceipt.now()
    ) async throws -> String {
        let payload = Self.payload(
            bundleId: bundleId, transactionIds: transactionIds, productId: productId, creationDate: creationDate)
        return Data(try await bytes(payload)).base64EncodedString()
    }

    /// The current time as a receipt writes it (`2026-11-30T10:00:00Z`).
    static func now() -> String {
        ISO8601DateFormatter().string(from: Date())
    }

    /// `payload` signed, in DER.
    func bytes(_ payload: [UInt8]) async throws -> [UInt8] {
        let signer = self.signer
        return try await offPool { try signer.sign(payload) }
    }

    static func payload(bundleId: String, transactionIds: [String], productId: String, creationDate: String?) -> [UInt8]
    {
        var attributes = [
            attribute(0, utf8("ProductionSandbox")), attribute(2, utf8(bundleId)), attribute(3, utf8("1.0.3")),
            attribute(4, octets([0xD1, 0xBC, 0xFE, 0xCF])), attribute(5, octets([UInt8](repeating: 0xA5, count: 20))),
            attribute(19, utf8("1.0")),
        ]
        if let creationDate { attributes.append(attribute(12, ia5(creationDate))) }
        for transactionId in transactionIds {
            attributes.append(
                attribute(
                    17,
                    set([
                        attribute(1701, integer(1)), attribute(1702, utf8(productId)),
                        attribute(1703, utf8(transactionId)),
                        attribute(1704, ia5("2026-11-30T09:00:00Z")), attribute(1705, utf8(transactionId)),
                    ])))
        }
        return set(attributes)
    }

    // MARK: DER

    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] {
        sequence([integer(type), integer(1), octets(value)])
    }
    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static func octets(_ bytes: [UInt8]) -> [UInt8] { tlv(0x04, bytes) }
    static func sequence(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static func set(_ parts: [[UInt8]]) -> [UInt8] { tlv(0x31, parts.flatMap { $0 }) }

    static func integer(_ value: Int64) -> [UInt8] {
        var octets = withUnsafeBytes(of: value.bigEndian, Array.init)
        while octets.count > 1,
            (octets[0] == 0x00 && octets[1] & 0x80 == 0) || (octets[0] == 0xFF && octets[1] & 0x80 != 0)
        {
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
