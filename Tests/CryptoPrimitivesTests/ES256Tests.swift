import CryptoPrimitives
import Foundation
import XCTest

/// ES256 against RFC 7515 appendix A.3, the signature encodings, and
/// round trips with generated keys.
final class ES256Tests: XCTestCase {
    // RFC 7515 A.3.1: the P-256 key (JWK x, y, d) and the compact JWS of A.3.
    private static let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    private static let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    private static let d = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"
    private static let jws =
        "eyJhbGciOiJFUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    private func rfcPublicKey() throws -> ES256PublicKey {
        try ES256PublicKey(rawPoint: [0x04] + StrictBase64.decodeURL(Self.x) + StrictBase64.decodeURL(Self.y))
    }

    private func rfcParts() throws -> (signingInput: [UInt8], signature: [UInt8]) {
        let parts = Self.jws.split(separator: ".")
        return (Array((parts[0] + "." + parts[1]).utf8), try StrictBase64.decodeURL(parts[2]))
    }

    func testRFC7515AppendixA3Verifies() throws {
        let key = try rfcPublicKey()
        let (input, signature) = try rfcParts()
        XCTAssertEqual(signature.count, ES256PublicKey.signatureBytes)
        XCTAssertTrue(key.isValidSignature(signature, for: input))
        // The same signature in DER verifies through the DER entry point.
        XCTAssertTrue(key.isValidDERSignature(try ECDSASignatureEncoding.der(fromRaw: signature), for: input))
        // The raw point survives SPKI and PEM.
        XCTAssertEqual(try ES256PublicKey(spkiDER: key.spkiDER).rawPoint, key.rawPoint)
        XCTAssertEqual(try ES256PublicKey(pem: Array(key.pem.utf8)).spkiDER, key.spkiDER)
    }

    func testTamperedSignatureOrMessageFails() throws {
        let key = try rfcPublicKey()
        let (input, signature) = try rfcParts()
        for index in [0, 31, 32, 63] {
            var tampered = signature
            tampered[index] ^= 0x01
            XCTAssertFalse(key.isValidSignature(tampered, for: input), "byte \(index)")
        }
        var message = input
        message[message.count - 1] ^= 0x01
        XCTAssertFalse(key.isValidSignature(signature, for: message))
        XCTAssertFalse(key.isValidSignature(Array(signature.dropLast()), for: input))
        XCTAssertFalse(key.isValidSignature(signature + [0], for: input))
        XCTAssertFalse(key.isValidSignature([UInt8](repeating: 0, count: 64), for: input))
        XCTAssertFalse(key.isValidDERSignature([0x30, 0x00], for: input))
        XCTAssertFalse(key.isValidDERSignature([], for: input))
    }

    func testRFCPrivateKeySignsWhatTheRFCPublicKeyVerifies() throws {
        // SEC1 ECPrivateKey { version 1, d, [0] prime256v1 }; OpenSSL derives the public point.
        let d = try StrictBase64.decodeURL(Self.d)
        let sec1: [UInt8] =
            [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + d
            + [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        let signer = try ES256SigningKey(privateKey: ECPrivateKey(sec1DER: sec1))
        XCTAssertEqual(signer.publicKey.rawPoint, try rfcPublicKey().rawPoint)
        let (input, _) = try rfcParts()
        XCTAssertTrue(try rfcPublicKey().isValidSignature(signer.sign(input), for: input))
    }

    func testSignVerifyRoundTripWithGeneratedKeys() throws {
        let key = try ES256SigningKey()
        let other = try ES256SigningKey()
        for length in [0, 1, 63, 64, 1000] {
            let message = [UInt8](repeating: UInt8(length & 0xFF), count: length)
            let signature = try key.sign(message)
            XCTAssertEqual(signature.count, 64)
            XCTAssertTrue(key.publicKey.isValidSignature(signature, for: message))
            XCTAssertFalse(other.publicKey.isValidSignature(signature, for: message))
        }
    }

    func testConcurrentVerificationsShareOneKey() throws {
        let key = try ES256SigningKey()
        let message = Array("concurrent".utf8)
        let signature = try key.sign(message)
        let publicKey = key.publicKey
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            var candidate = signature
            if index % 2 == 1 { candidate[index % 64] ^= 0x40 }
            XCTAssertEqual(publicKey.isValidSignature(candidate, for: message), index % 2 == 0)
        }
    }

    func testPublicKeyInputsAreChecked() throws {
        let point = try rfcPublicKey().rawPoint
        var offCurve = point
        offCurve[64] ^= 0x01
        XCTAssertThrowsError(try ES256PublicKey(rawPoint: offCurve)) {
            XCTAssertEqual($0 as? CryptoError, .malformedKey)
        }
        XCTAssertThrowsError(try ES256PublicKey(rawPoint: Array(point.dropLast()))) {
            XCTAssertEqual($0 as? CryptoError, .malformedKey)
        }
        var compressedTag = point
        compressedTag[0] = 0x02
        XCTAssertThrowsError(try ES256PublicKey(rawPoint: compressedTag)) {
            XCTAssertEqual($0 as? CryptoError, .malformedKey)
        }
        let p384 = try ECPrivateKey(generating: .p384).publicKeySPKIDER()
        XCTAssertThrowsError(try ES256PublicKey(spkiDER: p384)) { XCTAssertEqual($0 as? CryptoError, .notP256) }
        XCTAssertThrowsError(try ES256PublicKey(spkiDER: try rfcPublicKey().spkiDER + [0])) {
            XCTAssertEqual($0 as? CryptoError, .malformedKey)
        }
        XCTAssertThrowsError(try ES256PublicKey(pem: Array("not a pem".utf8))) {
            XCTAssertEqual($0 as? CryptoError, .malformedKey)
        }
    }

    func testSignatureEncodings() throws {
        // Halves with a leading zero byte and with the top bit set.
        let raw =
            [UInt8](repeating: 0, count: 1) + [UInt8](repeating: 0x7F, count: 31) + [UInt8](repeating: 0x80, count: 32)
        let der = try ECDSASignatureEncoding.der(fromRaw: raw)
        XCTAssertEqual(Array(der.prefix(4)), [0x30, 2 + 31 + 2 + 33, 0x02, 31])
        XCTAssertEqual(Array(der[35..<38]), [0x02, 33, 0x00])
        XCTAssertEqual(try ECDSASignatureEncoding.raw(fromDER: der), raw)
        // Zero halves encode as INTEGER 0.
        XCTAssertEqual(
            try ECDSASignatureEncoding.der(fromRaw: [UInt8](repeating: 0, count: 64)),
            [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00])
        XCTAssertThrowsError(try ECDSASignatureEncoding.der(fromRaw: [1, 2, 3])) {
            XCTAssertEqual($0 as? CryptoError, .malformedSignature)
        }
        XCTAssertThrowsError(try ECDSASignatureEncoding.der(fromRaw: [])) {
            XCTAssertEqual($0 as? CryptoError, .malformedSignature)
        }
        XCTAssertThrowsError(try ECDSASignatureEncoding.raw(fromDER: der + [0])) {
            XCTAssertEqual($0 as? CryptoError, .malformedSignature)
        }
        XCTAssertThrowsError(try ECDSASignatureEncoding.raw(fromDER: [0x30, 0x00])) {
            XCTAssertEqual($0 as? CryptoError, .malformedSignature)
        }
        // A 33-byte half does not fit ES256's 32.
        let wide = [0x30, 0x26, 0x02, 0x21, 0x01] + [UInt8](repeating: 0x11, count: 32) + [0x02, 0x01, 0x01]
        XCTAssertThrowsError(try ECDSASignatureEncoding.raw(fromDER: wide)) {
            XCTAssertEqual($0 as? CryptoError, .malformedSignature)
        }
    }
}
