import COpenSSL

/// The one owner of an OpenSSL `EVP_PKEY*` (freed in deinit), with the DER
/// readers and writers the key types share. Keys are never mutated after
/// they are made, and OpenSSL 3 allows concurrent signing and verifying
/// with such a key, hence `@unchecked Sendable`.
final class PKeyHandle: @unchecked Sendable {
    /// Owned; leaves this type only inside `withPointer`-style closures.
    let pointer: OpaquePointer

    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// A fresh key on `curve`.
    static func generate(_ curve: ECCurve) throws(CryptoError) -> PKeyHandle {
        guard let key = CIAP_EC_generate(curve.rawValue) else {
            ERR_clear_error()
            throw .keyGenerationFailed
        }
        return PKeyHandle(owning: key)
    }

    /// Parses DER with `parse`, which must consume every byte.
    static func parse(
        _ der: [UInt8], failure: CryptoError,
        _ parse: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?
    ) throws(CryptoError) -> PKeyHandle {
        guard !der.isEmpty, der.count <= Int(Int32.max) else { throw failure }
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let key = parse(&cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return key
        }
        guard let parsed else {
            ERR_clear_error()
            throw failure
        }
        let handle = PKeyHandle(owning: parsed)
        guard consumed == der.count else { throw failure }
        return handle
    }

    /// An unencrypted PKCS#8 PrivateKeyInfo.
    static func privateKey(pkcs8DER der: [UInt8]) throws(CryptoError) -> PKeyHandle {
        try parse(der, failure: .malformedKey) { cursor, length in
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, cursor, length) else { return nil }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            return EVP_PKCS82PKEY(info)
        }
    }

    /// A SEC1 ECPrivateKey (RFC 5915).
    static func privateKey(sec1DER der: [UInt8]) throws(CryptoError) -> PKeyHandle {
        try parse(der, failure: .malformedKey) { cursor, length in d2i_PrivateKey(EVP_PKEY_EC, nil, cursor, length) }
    }

    /// A SubjectPublicKeyInfo.
    static func publicKey(spkiDER der: [UInt8]) throws(CryptoError) -> PKeyHandle {
        try parse(der, failure: .malformedKey) { cursor, length in d2i_PUBKEY(nil, cursor, length) }
    }

    /// The EC curve, or why there is none this module handles.
    func curve() throws(CryptoError) -> ECCurve {
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else { throw .notEC }
        var name = [CChar](repeating: 0, count: 64)
        guard CIAP_EVP_PKEY_group_name(pointer, &name, name.count) == 1 else {
            ERR_clear_error()
            throw .unsupportedCurve
        }
        let groupName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let curve = ECCurve(openSSLGroupName: groupName) else { throw .unsupportedCurve }
        return curve
    }

    /// DER written by one of OpenSSL's `i2d_*` functions.
    static func encode(_ write: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32) throws(CryptoError)
        -> [UInt8]
    {
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = write(&output)
        guard length > 0, let output else {
            ERR_clear_error()
            throw .encodingFailed
        }
        defer { CIAP_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The public half as SubjectPublicKeyInfo DER.
    func spkiDER() throws(CryptoError) -> [UInt8] {
        try Self.encode { i2d_PUBKEY(pointer, $0) }
    }
}
