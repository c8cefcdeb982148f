/// Why a connection must answer with an error and close. Each reason carries
/// the status to send; the reason names are stable for logs and tests.
public struct HTTPRequestError: Error, Sendable, Equatable {
    /// The failure reasons, grouped by the status they answer.
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        // 400
        case malformedRequestLine
        case invalidMethod
        case invalidTarget
        case invalidLineEnding
        case invalidHeaderField
        case whitespaceBeforeColon
        case obsoleteLineFolding
        case missingHost
        case duplicateHost
        case invalidContentLength
        case conflictingContentLength
        case contentLengthWithTransferEncoding
        case transferEncodingInHTTP10
        case chunkedNotFinal
        case invalidChunkSize
        case invalidChunkFraming
        case chunkSizeLineTooLong
        case tooManyEmptyLines
        /// HTTP/2: a pseudo-header RFC 9113 §8.3.1 does not define for requests.
        case unknownPseudoHeader
        /// HTTP/2: no `:method`, or no origin-form `:path`.
        case missingPseudoHeader
        // 408
        case requestTimeout
        // 413
        case bodyTooLarge
        // 414
        case requestLineTooLong
        // 417
        case unsupportedExpectation
        // 429
        case tooManyPipelinedRequests
        // 431
        case headerBlockTooLarge
        case tooManyHeaderFields
        // 501
        case methodNotImplemented
        case unsupportedTransferCoding
        // 505
        case unsupportedVersion
        // 503
        /// The server holds as many request bytes as it may, over all its
        /// connections (`HTTPServer.Configuration.requestBytesBufferedMax`).
        case bufferedBytesExhausted
    }

    public let reason: Reason

    public init(_ reason: Reason) { self.reason = reason }

    /// The HTTP status to answer before closing.
    public var status: Int {
        switch reason {
        case .requestTimeout: return 408
        case .bodyTooLarge: return 413
        case .requestLineTooLong: return 414
        case .unsupportedExpectation: return 417
        case .tooManyPipelinedRequests: return 429
        case .headerBlockTooLarge, .tooManyHeaderFields: return 431
        case .methodNotImplemented, .unsupportedTransferCoding: return 501
        case .unsupportedVersion: return 505
        case .bufferedBytesExhausted: return 503
        default: return 400
        }
    }
}
