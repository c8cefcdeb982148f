import COpenSSL

/// The two encodings of an ECDSA signature: JOSE's raw r||s, each half
/// left-padded to the curve's coordinate size (RFC 7518 section 3.4), and
/// the DER ECDSA-Sig-Value (SEQUENCE of two INTEGERs) that X.509 and
/// OpenSSL use.
public enum ECDSASignatureEncoding {
    /// Raw r||s as DER, byte for byte what OpenSSL's `i2d_ECDSA_SIG`
    /// writes: each half as a minimal unsigned INTEGER (leading zeros
    /// dropped, 0x00 prefixed when the top bit is set, zero as `02 01 00`).
    /// The raw form must have an even length of at most 2 x 64 bytes.
    public static func der(fromRaw raw: [UInt8]) throws(CryptoError) -> [UInt8] {
        let half = raw.count / 2
        // With halves of at most 64 bytes every DER length fits one byte.
        guard raw.count % 2 == 0, half > 0, half <= 64 else { throw .malformedSignature }
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var digits = bytes.drop { $0 == 0 }
            if digits.isEmpty { digits = [0] }
            let needsPad = digits.first! & 0x80 != 0
            return [0x02, UInt8(digits.count + (needsPad ? 1 : 0))] + (needsPad ? [0] : []) + digits
        }
        let body = integer(raw[0..<half]) + integer(raw[half...])
        return [0x30, UInt8(body.count)] + body
    }

    /// DER as raw r||s with halves of `halfBytes` (32 for ES256). Refuses
    /// DER with trailing bytes and halves that do not fit.
    public static func raw(fromDER der: [UInt8], halfBytes: Int = ECCurve.p256.coordinateBytes) throws(CryptoError)
        -> [UInt8]
    {
        guard !der.isEmpty, der.count <= 1024, halfBytes > 0, halfBytes <= 66 else { throw .malformedSignature }
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return signature
        }
        guard let signature = parsed else {
            ERR_clear_error()
            throw .malformedSignature
        }
        defer { ECDSA_SIG_free(signature) }
        guard consumed == der.count else { throw .malformedSignature }
        var raw = [UInt8](repeating: 0, count: 2 * halfBytes)
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            (
                BN_bn2binpad(ECDSA_SIG_get0_r(signature), buffer.baseAddress, Int32(halfBytes)),
                BN_bn2binpad(ECDSA_SIG_get0_s(signature), buffer.baseAddress! + halfBytes, Int32(halfBytes))
            )
        }
        guard written.0 == Int32(halfBytes), written.1 == Int32(halfBytes) else {
            ERR_clear_error()
            throw .malformedSignature
        }
        return raw
    }
}
