/// Sends a DER OCSP request to a responder URL (HTTP POST,
/// `application/ocsp-request`) and returns the DER response body.
/// Implementations must not block Swift's cooperative pool; any transport
/// failure is thrown as `OCSPFetchError` and becomes `.retryable`.
public protocol OCSPFetcher: Sendable {
    func fetch(requestDER: [UInt8], responderURL: String) async throws(OCSPFetchError) -> [UInt8]
}

/// Why an OCSP responder could not be reached or answered unusably.
public struct OCSPFetchError: Error, Equatable, Sendable {
    public let reason: String
    public init(reason: String) { self.reason = reason }
}
