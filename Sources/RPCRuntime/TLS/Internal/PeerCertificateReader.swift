import COpenSSL
import RPCCore

/// Reads the verified peer certificate of a finished handshake into a
/// `PeerIdentity`. The only code that looks inside certificates here; every
/// OpenSSL object it gets is freed before it returns.
enum PeerCertificateReader {
    /// Names kept per certificate; the rest are ignored.
    static let namesMax = 32
    /// Longest DNS name (RFC 1035) and URI kept; longer ones are ignored.
    static let dnsNameBytesMax = 253
    static let uriBytesMax = 2048
    static let commonNameBytesMax = 64

    /// The identity of `ssl`'s peer: nil when it sent no certificate or the
    /// certificate did not verify. Do not escape the pointer.
    static func identity(of ssl: OpaquePointer) -> PeerIdentity? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        // SSL_VERIFY_PEER already fails the handshake on a bad certificate;
        // checked again so an identity never comes from an unverified one.
        guard SSL_get_verify_result(ssl) == Int(X509_V_OK) else { return nil }
        var identity = PeerIdentity(dnsNames: [], uris: [], commonName: commonName(of: certificate))
        readSubjectAlternativeNames(of: certificate, into: &identity)
        return identity
    }

    private static func readSubjectAlternativeNames(of certificate: OpaquePointer, into identity: inout PeerIdentity) {
        guard let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        let count = min(Int(OPENSSL_sk_num(names)), namesMax)
        for index in 0..<count {
            guard let entry = OPENSSL_sk_value(names, Int32(index))?.assumingMemoryBound(to: GENERAL_NAME.self) else {
                continue
            }
            switch entry.pointee.type {
            case GEN_DNS:
                if let name = ascii(entry.pointee.d.dNSName, bytesMax: dnsNameBytesMax) {
                    identity.dnsNames.append(name.lowercased())
                }
            case GEN_URI:
                if let uri = ascii(entry.pointee.d.uniformResourceIdentifier, bytesMax: uriBytesMax) {
                    identity.uris.append(uri)
                }
            default:
                continue
            }
        }
    }

    /// An IA5String's text when it is printable ASCII (no NUL, which could
    /// hide a suffix from a C-string comparison), nil otherwise.
    private static func ascii(_ string: UnsafeMutablePointer<ASN1_STRING>?, bytesMax: Int) -> String? {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return nil }
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, length <= bytesMax else { return nil }
        let bytes = UnsafeBufferPointer(start: data, count: length)
        guard bytes.allSatisfy({ (0x21...0x7e).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The subject's CN as UTF-8, for logs; nil without one or when it is unusual.
    private static func commonName(of certificate: OpaquePointer) -> String? {
        guard let subject = X509_get_subject_name(certificate) else { return nil }
        let index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(subject, index), let value = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, value)
        // Freed whatever the length: an empty string still allocates its buffer.
        defer { if let utf8 { CIAP_OPENSSL_free(utf8) } }
        guard length > 0, let utf8 else { return nil }
        guard Int(length) <= commonNameBytesMax else { return nil }
        let bytes = UnsafeBufferPointer(start: utf8, count: Int(length))
        guard !bytes.contains(0) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
