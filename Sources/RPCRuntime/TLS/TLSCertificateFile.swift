#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// What a PEM certificate file holds that an operator must watch: when its
/// certificates stop being valid. Read with OpenSSL, without keeping any of
/// its objects.
public enum TLSCertificateFile {
    /// The earliest `notAfter` of the certificates in the PEM file at
    /// `path` (a chain or a CA bundle: the first to expire ends it), in Unix
    /// seconds. Throws when the file cannot be read or holds no certificate.
    public static func earliestExpiryUnixSeconds(path: String) throws(TLSError) -> Int64 {
        ERR_clear_error()
        guard let bio = BIO_new_file(path, "r") else { throw TLSError("open \(path)") }
        defer { BIO_free(bio) }
        var earliest: Int64?
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            defer { X509_free(certificate) }
            var parts = tm()
            guard let notAfter = X509_get0_notAfter(certificate), ASN1_TIME_to_tm(notAfter, &parts) == 1 else {
                throw TLSError("read notAfter in \(path)")
            }
            let seconds = Int64(timegm(&parts))
            earliest = min(earliest ?? seconds, seconds)
        }
        // The loop ends on the end of the file (a PEM "no start line" error).
        ERR_clear_error()
        guard let earliest else { throw TLSError("no certificate in \(path)") }
        return earliest
    }
}

extension TLSConfiguration {
    /// The certificate files this configuration loads: its chain, the CA
    /// bundle that checks the server, the one that checks callers.
    public var certificateFilePaths: [String] {
        [certificateChainPath, trustRootsPath, clientCertificateTrustRootsPath].compactMap { $0 }
    }
}
