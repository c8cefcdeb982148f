/// Why a piece of App Store signed data was refused. Every case has a stable
/// `code` for logs and API answers, and `isRetryable` says whether asking
/// again later could change the outcome (only network trouble can).
public enum VerificationFailure: Error, Equatable, Sendable {
    /// Which certificate of the chain a check was about.
    public enum CertificatePosition: String, Sendable {
        case leaf
        case intermediate
    }

    /// Not a compact JWS: wrong part count, bad base64url, not UTF-8, header not JSON.
    case malformed(reason: String)
    /// The header's `alg` is not ES256 (`none`, HS256, ...).
    case unsupportedAlgorithm(String)
    /// The header has no `x5c` array.
    case missingCertificateChain
    /// `x5c` does not hold exactly three certificates.
    case wrongChainLength(count: Int)
    /// A certificate of `x5c` is not standard base64 DER, or the leaf key is not P-256.
    case badCertificate(reason: String)
    /// The chain leaf -> intermediate -> configured root does not verify.
    case badChain(reason: String)
    /// A required Apple extension OID is missing from the leaf or intermediate.
    case wrongOID(CertificatePosition)
    /// The chain is not valid at the effective date.
    case expired
    /// The ES256 signature does not verify with the leaf key.
    case badSignature
    /// The payload's bundle id is not the configured one.
    case wrongBundle
    /// The payload's environment is not allowed by the configuration.
    case wrongEnvironment
    /// The payload's appAppleId differs from the configured one (Production).
    case wrongAppAppleId
    /// The JWS is longer than `VerificationLimits.jwsLengthBytesMax`.
    case payloadTooLarge(lengthBytes: Int)
    /// The payload is not a JSON object of the expected shape.
    case invalidPayload(reason: String)
    /// Online checks could not complete (network, responder trouble); try later.
    case retryable(reason: String)
    /// Online checks are configured but a synchronous (offline) entry point was used.
    case onlineCheckRequired

    /// Stable, machine-readable code.
    public var code: String {
        switch self {
        case .malformed: return "malformed"
        case .unsupportedAlgorithm: return "unsupported_algorithm"
        case .missingCertificateChain: return "missing_certificate_chain"
        case .wrongChainLength: return "wrong_chain_length"
        case .badCertificate: return "bad_certificate"
        case .badChain: return "bad_chain"
        case .wrongOID(let position): return "wrong_oid_\(position.rawValue)"
        case .expired: return "expired"
        case .badSignature: return "bad_signature"
        case .wrongBundle: return "wrong_bundle"
        case .wrongEnvironment: return "wrong_environment"
        case .wrongAppAppleId: return "wrong_app_apple_id"
        case .payloadTooLarge: return "payload_too_large"
        case .invalidPayload: return "invalid_payload"
        case .retryable: return "retryable"
        case .onlineCheckRequired: return "online_check_required"
        }
    }

    /// Whether retrying later could change the outcome.
    public var isRetryable: Bool {
        if case .retryable = self { return true }
        return false
    }

    /// The status Apple's App Store Server Library would report for the same
    /// input, for conformance tests and audits.
    public var appleStatus: AppleVerificationStatus {
        switch self {
        case .wrongBundle, .wrongAppAppleId: return .invalidAppIdentifier
        case .wrongEnvironment: return .invalidEnvironment
        case .wrongChainLength: return .invalidChainLength
        case .badCertificate: return .invalidCertificate
        default: return .verificationFailure
        }
    }
}

/// The outcome categories of Apple's SignedDataVerifier (Python/Java naming).
public enum AppleVerificationStatus: String, Sendable {
    case verificationFailure = "VERIFICATION_FAILURE"
    case invalidAppIdentifier = "INVALID_APP_IDENTIFIER"
    case invalidCertificate = "INVALID_CERTIFICATE"
    case invalidChainLength = "INVALID_CHAIN_LENGTH"
    case invalidEnvironment = "INVALID_ENVIRONMENT"
}

extension VerificationFailure: CustomStringConvertible {
    /// Code plus detail; never contains the JWS itself.
    public var description: String {
        switch self {
        case .malformed(let reason), .badCertificate(let reason), .badChain(let reason),
            .invalidPayload(let reason), .retryable(let reason):
            return "\(code): \(reason)"
        case .unsupportedAlgorithm(let algorithm):
            // The sender's text: at most 32 bytes, and only printable ASCII.
            let shown =
                algorithm.utf8.allSatisfy { (0x20...0x7e).contains($0) }
                ? String(decoding: algorithm.utf8.prefix(32), as: UTF8.self) : "(not ASCII)"
            return "\(code): \(shown)"
        case .wrongChainLength(let count): return "\(code): \(count) certificates"
        case .payloadTooLarge(let length): return "\(code): \(length) bytes"
        default: return code
        }
    }
}
