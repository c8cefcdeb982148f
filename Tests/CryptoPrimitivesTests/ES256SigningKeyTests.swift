import CryptoPrimitives
import XCTest

/// The .p8 reader and ES256 signer the App Store Server API client uses.
final class ES256SigningKeyTests: XCTestCase {
    /// A fresh key on `curve` as PKCS#8 PEM (what App Store Connect hands out).
    static func pkcs8PEM(curve: ECCurve = .p256) throws -> [UInt8] {
        Array(try ECPrivateKey(generating: curve).pkcs8PEM().utf8)
    }

    /// The same kind of key in SEC1 form (`EC PRIVATE KEY`), which is not a .p8.
    static func sec1PEM() throws -> String {
        PEMBlock(label: "EC PRIVATE KEY", der: try ECPrivateKey(generating: .p256).sec1DER()).text
    }

    func testSignsRawSignaturesItVerifies() throws {
        let key = try ES256SigningKey(pkcs8PEM: Self.pkcs8PEM())
        let message = Array("header.payload".utf8)
        let signature = try key.sign(message)
        XCTAssertEqual(signature.count, 64)
        XCTAssertTrue(key.isValidSignature(signature, for: message))
        XCTAssertFalse(key.isValidSignature(signature, for: Array("header.payload!".utf8)))
        var flipped = signature
        flipped[10] ^= 1
        XCTAssertFalse(key.isValidSignature(flipped, for: message))
        // ECDSA is randomised: two signatures differ, both verify.
        let again = try key.sign(message)
        XCTAssertNotEqual(again, signature)
        XCTAssertTrue(key.isValidSignature(again, for: message))
    }

    func testAnotherKeysSignatureDoesNotVerify() throws {
        let key = try ES256SigningKey(pkcs8PEM: Self.pkcs8PEM())
        let other = try ES256SigningKey(pkcs8PEM: Self.pkcs8PEM())
        let message = Array("m".utf8)
        XCTAssertFalse(key.isValidSignature(try other.sign(message), for: message))
    }

    func testPublicKeyPEMIsTheSubjectPublicKeyInfo() throws {
        let key = try ES256SigningKey(pkcs8PEM: Self.pkcs8PEM())
        let pem = key.publicKeyPEM
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        XCTAssertTrue(pem.hasSuffix("-----END PUBLIC KEY-----\n"))
        // Read back as a verification key, it checks the signing key's signatures.
        let parsed = try ES256PublicKey(pem: Array(pem.utf8))
        XCTAssertEqual(parsed.spkiDER, key.publicKey.spkiDER)
        let message = Array("shared".utf8)
        XCTAssertTrue(parsed.isValidSignature(try key.sign(message), for: message))
    }

    func testRefusesWhatIsNotAP8() throws {
        let cases: [([UInt8], CryptoError)] = [
            (Array("hello".utf8), .notPEM),
            ([0xff, 0xfe, 0x00], .notPEM),
            (Array(try Self.sec1PEM().utf8), .notPKCS8),
            (Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8), .notPKCS8),
            // Judged by the label even when the body does not decode.
            (Array("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----\n".utf8), .notPKCS8),
            (
                Array("-----BEGIN ENCRYPTED PRIVATE KEY-----\n!!\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8),
                .encrypted
            ),
            (
                Array("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8),
                .encrypted
            ),
            (Array("-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n".utf8), .malformedKey),
            (Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8), .malformedKey),
            (Array("-----BEGIN PRIVATE KEY-----\nAAAA\n".utf8), .notPEM),
            (try Self.pkcs8PEM(curve: .p384), .notP256),
            ([UInt8](repeating: 0x41, count: 20_000), .notPEM),
        ]
        for (input, expected) in cases {
            XCTAssertThrowsError(try ES256SigningKey(pkcs8PEM: input)) { error in
                XCTAssertEqual(error as? CryptoError, expected, String(decoding: input.prefix(40), as: UTF8.self))
            }
        }
    }

    func testKeyNeverAppearsInDescriptions() throws {
        let pem = try Self.pkcs8PEM()
        let key = try ES256SigningKey(pkcs8PEM: pem)
        var dumped = ""
        dump(key, to: &dumped)
        dump(key.privateKey, to: &dumped)
        let texts = [String(describing: key), String(reflecting: key), "\(key)", "\(key.privateKey)", dumped]
        let body = String(decoding: pem, as: UTF8.self).split(separator: "\n").dropFirst().first.map(String.init) ?? ""
        XCTAssertFalse(body.isEmpty)
        for text in texts {
            XCTAssertFalse(text.contains(body), text)
            XCTAssertFalse(text.contains("PRIVATE KEY"), text)
        }
    }

    func testPrivateKeyExportsReadBack() throws {
        let key = try ECPrivateKey(generating: .p384)
        XCTAssertEqual(key.curve, .p384)
        XCTAssertEqual(try ECPrivateKey(pkcs8DER: key.pkcs8DER()).publicKeySPKIDER(), try key.publicKeySPKIDER())
        XCTAssertEqual(try ECPrivateKey(sec1DER: key.sec1DER()).publicKeySPKIDER(), try key.publicKeySPKIDER())
        XCTAssertEqual(try ECPrivateKey(pkcs8PEM: Array(key.pkcs8PEM().utf8)).curve, .p384)
        // Trailing bytes after the DER are refused, as is a key of the wrong form.
        XCTAssertThrowsError(try ECPrivateKey(pkcs8DER: key.pkcs8DER() + [0])) {
            XCTAssertEqual($0 as? CryptoError, .malformedKey)
        }
        XCTAssertThrowsError(try ECPrivateKey(pkcs8DER: key.sec1DER())) {
            XCTAssertEqual($0 as? CryptoError, .malformedKey)
        }
        XCTAssertThrowsError(try ES256SigningKey(privateKey: key)) { XCTAssertEqual($0 as? CryptoError, .notP256) }
    }
}
