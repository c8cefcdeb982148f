// libFuzzer entry point over the JWS parser and verifier. Not a SwiftPM
// target: scripts/fuzz.sh compiles it together with the sources of
// AppStoreVerification into one module (so internal types are reachable),
// against StrictJSON and CryptoPrimitives modules built the same way, with
// `-sanitize=fuzzer,address`. See docs/PERFORMANCE.md.
//
// The first input byte picks what the rest is:
//   0: a whole compact JWS;
//   1: the protected header JSON, spliced into the real Apple JWS;
//   2: the payload JSON, spliced into the real Apple JWS;
//   3: the 64-byte r||s signature, spliced into the real Apple JWS;
//   other: raw bytes for the base64, JSON and DER-signature oracles only.
// Oracles (a violation traps, which libFuzzer reports as a crash):
//   - verification never succeeds unless the JWS is exactly the real one
//     (strict base64 has one encoding per value; signatures are unforgeable);
//   - strict base64: a value that decodes re-encodes to the same text;
//   - the Swift DER signature encoder matches OpenSSL's i2d_ECDSA_SIG.
import COpenSSL
import CryptoPrimitives
import Foundation
import StrictJSON

/// The fixed inputs of the harness, read once from the environment that
/// scripts/fuzz.sh sets (JWS_FUZZ_JWS, JWS_FUZZ_ROOT).
final class JWSFuzzContext: Sendable {
    static let shared = JWSFuzzContext()

    let realJWS: String
    let parts: [String]
    let verifier: SignedDataVerifier

    private init() {
        let environment = ProcessInfo.processInfo.environment
        guard let jwsPath = environment["JWS_FUZZ_JWS"], let rootPath = environment["JWS_FUZZ_ROOT"],
            let jwsData = FileManager.default.contents(atPath: jwsPath),
            let roots = try? VerifierConfiguration.loadRoots(paths: [rootPath])
        else { fatalError("set JWS_FUZZ_JWS and JWS_FUZZ_ROOT (scripts/fuzz.sh does)") }
        realJWS = String(decoding: jwsData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        parts = realJWS.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let configuration = VerifierConfiguration(
            bundleId: "com.goodheartapp", appAppleId: nil, allowedEnvironments: [.sandbox], trustedRoots: roots)
        guard let verifier = try? SignedDataVerifier(configuration: configuration),
            (try? verifier.verifyTransaction(realJWS)) != nil
        else { fatalError("the real JWS must verify before fuzzing (it warms the chain cache)") }
        self.verifier = verifier
    }

    /// Verifies `jws` with the shared (warm-cache) verifier; success must mean the real JWS.
    func checkVerification(_ jws: String) {
        if (try? verifier.verifyTransaction(jws)) != nil {
            require(jws == realJWS, "a JWS other than the real one verified")
        }
        _ = try? verifier.verifyAndDecodeJSON(jws, kind: .notification)
    }
}

/// Reference DER encoding through OpenSSL (what the verifier used before).
func opensslDERSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
    let half = raw.count / 2
    guard let signature = ECDSA_SIG_new() else { return nil }
    defer { ECDSA_SIG_free(signature) }
    let r = raw[0..<half].withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
    let s = raw[half...].withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
    guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
        BN_free(r)
        BN_free(s)
        return nil
    }
    var output: UnsafeMutablePointer<UInt8>? = nil
    let length = i2d_ECDSA_SIG(signature, &output)
    guard length > 0, let output else { return nil }
    defer { CIAP_OPENSSL_free(output) }
    return Array(UnsafeBufferPointer(start: output, count: Int(length)))
}

func checkByteOracles(_ bytes: [UInt8]) {
    if let decoded = try? StrictBase64.decodeURL(bytes) {
        require(Array(StrictBase64.encodeURL(decoded).utf8) == bytes, "base64url decode/encode mismatch")
    }
    if let decoded = try? StrictBase64.decodeStandard(bytes) {
        require(Array(StrictBase64.encodeStandard(decoded).utf8) == bytes, "base64 decode/encode mismatch")
    }
    _ = try? StrictJSONParser().parse(bytes)
    if bytes.count >= VerificationLimits.signatureLengthBytes {
        let raw = Array(bytes.prefix(VerificationLimits.signatureLengthBytes))
        require(
            (try? ECDSASignatureEncoding.der(fromRaw: raw)) == opensslDERSignature(fromRaw: raw), "DER encoder mismatch"
        )
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func jwsFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let context = JWSFuzzContext.shared
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] {
    case 0:
        context.checkVerification(String(decoding: body, as: UTF8.self))
    case 1:
        context.checkVerification(
            [StrictBase64.encodeURL(body), context.parts[1], context.parts[2]].joined(separator: "."))
    case 2:
        context.checkVerification(
            [context.parts[0], StrictBase64.encodeURL(body), context.parts[2]].joined(separator: "."))
    case 3:
        context.checkVerification(
            [context.parts[0], context.parts[1], StrictBase64.encodeURL(body)].joined(separator: "."))
    default:
        checkByteOracles(body)
    }
    return 0
}
