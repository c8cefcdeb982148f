import CryptoPrimitives
import StrictJSON

/// A compact JWS split and decoded, before any cryptographic check. Parsing
/// is pure and strict: exactly three base64url parts without padding, a UTF-8
/// JSON object header with `alg` ES256 and an `x5c` of three strings, a JSON
/// object payload, and a 64-byte signature.
struct CompactJWS: Sendable {
    /// `x5c` entries as sent (standard base64 DER): leaf, intermediate, root.
    let certificateChainBase64: [String]
    /// The payload parsed by `StrictJSONParser`.
    let payload: JSONValue
    /// The payload as the exact UTF-8 text that was signed.
    let payloadText: String
    /// ASCII bytes of `header.payload`, the ES256 signing input.
    let signingInput: [UInt8]
    /// Raw r||s.
    let signature: [UInt8]

    /// Header and payload share the JWS's byte budget and the nesting limit.
    private static let parser = StrictJSONParser(
        documentBytesMax: VerificationLimits.jwsLengthBytesMax, depthMax: VerificationLimits.jsonDepthMax)

    static func parse(_ text: String) throws(VerificationFailure) -> CompactJWS {
        let bytes = Array(text.utf8)
        guard bytes.count <= VerificationLimits.jwsLengthBytesMax else {
            throw .payloadTooLarge(lengthBytes: bytes.count)
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed(reason: "expected 3 parts, found \(parts.count)") }
        guard let headerBytes = try? StrictBase64.decodeURL(parts[0]),
            let payloadBytes = try? StrictBase64.decodeURL(parts[1]),
            let signature = try? StrictBase64.decodeURL(parts[2])
        else { throw .malformed(reason: "part is not unpadded base64url") }

        guard String(validating: headerBytes, as: UTF8.self) != nil else {
            throw .malformed(reason: "header is not UTF-8")
        }
        let headerValue: JSONValue
        do {
            headerValue = try parser.parse(headerBytes)
        } catch {
            throw .malformed(reason: "header JSON: \(error)")
        }
        guard case .object(let header) = headerValue else { throw .malformed(reason: "header is not a JSON object") }
        guard case .string(let algorithm)? = header["alg"] else { throw .unsupportedAlgorithm("(missing)") }
        // Compared byte for byte: String's == would normalize the sender's text first.
        guard algorithm.utf8.elementsEqual("ES256".utf8) else { throw .unsupportedAlgorithm(algorithm) }

        guard let payloadText = String(validating: payloadBytes, as: UTF8.self) else {
            throw .malformed(reason: "payload is not UTF-8")
        }
        let payload: JSONValue
        do {
            payload = try parser.parse(payloadBytes)
        } catch {
            throw .invalidPayload(reason: "payload JSON: \(error)")
        }
        guard case .object = payload else { throw .invalidPayload(reason: "payload is not a JSON object") }

        let chain = try certificateChain(header["x5c"])
        guard signature.count == VerificationLimits.signatureLengthBytes else { throw .badSignature }
        let signingInput = Array(bytes[..<(parts[0].count + 1 + parts[1].count)])
        return CompactJWS(
            certificateChainBase64: chain, payload: payload, payloadText: payloadText,
            signingInput: signingInput, signature: signature)
    }

    private static func certificateChain(_ value: JSONValue?) throws(VerificationFailure) -> [String] {
        guard let value, value != .null else { throw .missingCertificateChain }
        guard case .array(let elements) = value else { throw .malformed(reason: "x5c is not an array") }
        guard !elements.isEmpty else { throw .missingCertificateChain }
        guard elements.count == VerificationLimits.certificateChainLength else {
            throw .wrongChainLength(count: elements.count)
        }
        var chain: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw .badCertificate(reason: "x5c entry is not a string") }
            chain.append(text)
        }
        return chain
    }
}
