import HTTPServer

/// Why a request is not authenticated. Every case answers 401
/// UNAUTHENTICATED; `code` is stable for logs and the problem's detail, and
/// deliberately coarse enough not to help a forger.
public enum AuthFailure: Error, Sendable, Equatable {
    /// No Authorization header.
    case missingCredentials
    /// Not exactly one `Authorization: Bearer <token>`.
    case malformedAuthorizationHeader
    /// The token exceeds `GatewayLimits.bearerTokenBytesMax`.
    case tokenTooLarge
    /// Not three base64url segments of JSON objects (duplicate keys included).
    case malformedToken
    /// `alg` is `none` or anything but HS256/ES256.
    case unsupportedAlgorithm
    /// `alg` names an algorithm for which no key is configured (this is
    /// what stops HS256 tokens "signed" with the ES256 public key).
    case algorithmNotAllowed
    /// A `crit` header: we understand no extensions, so must refuse.
    case unknownCriticalHeader
    case invalidSignature
    case expired
    case notYetValid
    case issuerMismatch
    case audienceMismatch
    /// A required claim is absent (the claim's name).
    case missingClaim(String)
    /// A claim has the wrong type or format (the claim's name).
    case invalidClaim(String)

    /// The stable code.
    public var code: String {
        switch self {
        case .missingCredentials: return "missing_credentials"
        case .malformedAuthorizationHeader: return "malformed_authorization_header"
        case .tokenTooLarge: return "token_too_large"
        case .malformedToken: return "malformed_token"
        case .unsupportedAlgorithm: return "unsupported_algorithm"
        case .algorithmNotAllowed: return "algorithm_not_allowed"
        case .unknownCriticalHeader: return "unknown_critical_header"
        case .invalidSignature: return "invalid_signature"
        case .expired: return "token_expired"
        case .notYetValid: return "token_not_yet_valid"
        case .issuerMismatch: return "issuer_mismatch"
        case .audienceMismatch: return "audience_mismatch"
        case .missingClaim(let name): return "missing_claim_" + name
        case .invalidClaim(let name): return "invalid_claim_" + name
        }
    }

    /// The 401 problem with an RFC 6750 challenge.
    public var problem: Problem {
        var headers = HTTPHeaders()
        if self == .missingCredentials {
            headers.add(name: "WWW-Authenticate", value: #"Bearer realm="iap-credits""#)
        } else {
            headers.add(name: "WWW-Authenticate", value: #"Bearer realm="iap-credits", error="invalid_token""#)
        }
        return Problem(.unauthenticated, detail: "Authentication failed (\(code)).", headers: headers)
    }
}
