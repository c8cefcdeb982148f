import AppStoreVerification
import COpenSSL
import XCTest

/// The .p8 reader and ES256 signer the App Store Server API client uses.
final class ES256SigningKeyTests: XCTestCase {
    /// A fresh key on `curve` as PKCS#8 PEM (what App Store Connect hands out).
    static func pkcs8PEM(curve: String = "P-256") -> [UInt8] {
        let key = CIAP_EC_generate(curve)!
        defer { EVP_PKEY_free(key) }
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        XCTAssertEqual(PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil), 1)
        var pointer: UnsafeMutablePointer<CChar>? = nil
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        return Array(UnsafeRawBufferPointer(start: pointer, count: length))
    }

    /// The same kind of key in SEC1 form (`EC PRIVATE KEY`), which is not a .p8.
    static func sec1PEM() -> String {
        let key = CIAP_EC_generate("P-256")!
        defer { EVP_PKEY_free(key) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PrivateKey(key, &output)
        defer { CIAP_OPENSSL_free(output) }
        let base64 = StrictBase64.encodeStandard(UnsafeBufferPointer(start: output, count: Int(length)))
        return "-----BEGIN EC PRIVATE KEY-----\n\(base64)\n-----END EC PRIVATE KEY-----\n"
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
        let parsed: OpaquePointer? = Array(pem.utf8).withUnsafeBytes { buffer in
            let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        XCTAssertNotNil(parsed)
        EVP_PKEY_free(parsed)
    }

    func testRefusesWhatIsNotAP8() {
        let cases: [([UInt8], ES256KeyError)] = [
            (Array("hello".utf8), .notPEM),
            ([0xff, 0xfe, 0x00], .notPEM),
            (Array(Self.sec1PEM().utf8), .notPKCS8),
            (Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8), .notPKCS8),
            (Array("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8), .encrypted),
            (Array("-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n".utf8), .malformed),
            (Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8), .malformed),
            (Array("-----BEGIN PRIVATE KEY-----\nAAAA\n".utf8), .notPEM),
            (Self.pkcs8PEM(curve: "P-384"), .notP256),
            ([UInt8](repeating: 0x41, count: 20_000), .notPEM),
        ]
        for (input, expected) in cases {
            XCTAssertThrowsError(try ES256SigningKey(pkcs8PEM: input)) { error in
                XCTAssertEqual(error as? ES256KeyError, expected, String(decoding: input.prefix(40), as: UTF8.self))
            }
        }
    }

    func testKeyNeverAppearsInDescriptions() throws {
        let pem = Self.pkcs8PEM()
        let key = try ES256SigningKey(pkcs8PEM: pem)
        var dumped = ""
        dump(key, to: &dumped)
        let texts = [String(describing: key), String(reflecting: key), "\(key)", dumped]
        let body = String(decoding: pem, as: UTF8.self).split(separator: "\n").dropFirst().first.map(String.init) ?? ""
        XCTAssertFalse(body.isEmpty)
        for text in texts {
            XCTAssertFalse(text.contains(body), text)
            XCTAssertFalse(text.contains("PRIVATE KEY"), text)
        }
    }
}
