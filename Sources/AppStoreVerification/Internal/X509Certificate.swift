import COpenSSL
import CryptoPrimitives
import Foundation

/// An owned OpenSSL certificate (`X509*`), freed in deinit. OpenSSL allows
/// concurrent read-only use of a certificate, which is all this type offers
/// after init, hence `@unchecked Sendable`.
final class X509Certificate: @unchecked Sendable {
    /// Owned; never escapes this type except through `withPointer`.
    private let pointer: OpaquePointer

    /// Parses DER; nil if it is not exactly one well-formed certificate.
    init?(der: some Collection<UInt8>) {
        guard let parsed = decodeWholeDER(Array(der), { d2i_X509(nil, $0, $1) }, free: X509_free) else { return nil }
        self.pointer = parsed
    }

    /// Takes ownership of one reference to `pointer`.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Adds a reference to a borrowed certificate and owns that reference.
    convenience init(retaining pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.init(owning: pointer)
    }

    deinit { X509_free(pointer) }

    /// Runs `body` with the raw handle. Do not let the pointer escape `body`.
    func withPointer<Result>(_ body: (OpaquePointer) throws -> Result) rethrows -> Result {
        try body(pointer)
    }

    /// The DER encoding.
    var derBytes: [UInt8] {
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(pointer, &output)
        guard length > 0, let output else { return [] }
        defer { CIAP_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// Whether an extension with this dotted OID is present (critical or not).
    func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    /// notBefore as seconds since 1970, nil if unreadable.
    var notBeforeSeconds: Int64? { Self.seconds(X509_get0_notBefore(pointer)) }
    /// notAfter as seconds since 1970, nil if unreadable.
    var notAfterSeconds: Int64? { Self.seconds(X509_get0_notAfter(pointer)) }

    /// An ASN1_TIME as seconds since 1970, nil if unreadable.
    static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else { return nil }
        return Int64(timegm(&components))
    }

    /// The subject public key when it is an ES256 (P-256) key, else nil.
    /// Read once per verified chain, so the DER round trip costs nothing.
    var es256PublicKey: ES256PublicKey? {
        guard let subjectKey = X509_get_X509_PUBKEY(pointer) else { return nil }
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_PUBKEY(subjectKey, &output)
        guard length > 0, let output else {
            ERR_clear_error()
            return nil
        }
        defer { CIAP_OPENSSL_free(output) }
        return try? ES256PublicKey(spkiDER: Array(UnsafeBufferPointer(start: output, count: Int(length))))
    }

    /// OCSP responder URLs from the Authority Information Access extension.
    var ocspURLs: [String] {
        guard let list = X509_get1_ocsp(pointer) else { return [] }
        defer { CIAP_X509_ocsp_list_free(list) }
        var urls: [String] = []
        for index in 0..<CIAP_ocsp_list_num(list) {
            if let value = CIAP_ocsp_list_value(list, index) { urls.append(String(cString: value)) }
        }
        return urls
    }
}

/// Runs an OpenSSL `d2i_*` function (`decode(cursor, length)`) over all of
/// `bytes`: the object it decoded, owned by the caller; nil when it failed
/// (its error queue cleared) or when bytes follow the object (`free`
/// releases it then).
func decodeWholeDER(
    _ bytes: [UInt8], _ decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
    free: (OpaquePointer) -> Void
) -> OpaquePointer? {
    guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return nil }
    var parsedLength = 0
    let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
        var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
        let object = decode(&cursor, buffer.count)
        if let cursor, let base = buffer.baseAddress { parsedLength = cursor - base }
        return object
    }
    guard let parsed else {
        ERR_clear_error()
        return nil
    }
    guard parsedLength == bytes.count else {
        free(parsed)
        return nil
    }
    return parsed
}
