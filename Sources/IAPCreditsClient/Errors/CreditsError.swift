/// Why a gateway call did not give the documented answer. Every case maps
/// to a `TransactionDisposition` (what a verify answer means for the StoreKit
/// transaction), a `RecoveryAdvice`, and a message in English and
/// Simplified Chinese. Descriptions never contain tokens or signed data.
public struct CreditsError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The gateway answered a problem document.
        case problem(GatewayProblem)
        /// No answer arrived (offline, timeout, refused or lost connection,
        /// cancelled); the text names the cause, never the request.
        case transport(String)
        /// An answer arrived that is neither the documented body nor a
        /// problem (a proxy's error page, a truncated or invalid body).
        case unexpectedAnswer(status: Int)
        /// The app supplied no bearer token (the user is signed out).
        case notSignedIn
        /// The app asked for something the gateway would refuse before
        /// sending it (e.g. a transaction id that is not decimal digits).
        case invalidRequest(String)
    }

    public let kind: Kind
    /// The answer's `X-Request-Id`, for support (nil when nothing answered).
    public let requestID: String?
    /// The answer's `Retry-After` in seconds (delta-seconds, at most
    /// `ClientLimits.retryAfterSecondsMax`): a retry waits at least this long.
    public let retryAfterSeconds: Int?

    public init(_ kind: Kind, requestID: String? = nil, retryAfterSeconds: Int? = nil) {
        self.kind = kind
        self.requestID = requestID
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The problem code, when the gateway answered one.
    public var problemCode: ProblemCode? {
        if case .problem(let problem) = kind { return problem.code }
        return nil
    }

    /// What a verify that failed this way means for the StoreKit transaction.
    /// Only PAYMENT_TRANSACTION_REVOKED finishes it; anything without a
    /// problem code (no answer, a garbled answer) keeps it and retries.
    public var disposition: TransactionDisposition {
        switch kind {
        case .problem(let problem): problem.code.policy.disposition
        case .invalidRequest: .keepAndReport
        case .transport, .unexpectedAnswer, .notSignedIn: .keepAndRetry
        }
    }

    public var advice: RecoveryAdvice {
        switch kind {
        case .problem(let problem): problem.code.policy.advice
        case .invalidRequest: .contactSupport
        case .transport, .unexpectedAnswer, .notSignedIn: .retryLater
        }
    }

    /// The message for the user, in `language`.
    public func localizedMessage(_ language: MessageLanguage = .preferred()) -> String {
        LocalizedMessages.text(for: messageKey, in: language)
    }

    var messageKey: MessageKey {
        switch kind {
        case .problem(let problem): .problem(problem.code)
        case .transport: .offline
        case .unexpectedAnswer: .unexpectedAnswer
        case .notSignedIn: .notSignedIn
        case .invalidRequest: .problem(.validationFailed)
        }
    }

    public var description: String {
        let request = requestID.map { " (request \($0))" } ?? ""
        switch kind {
        case .problem(let problem): return "gateway problem \(problem.code.wireCode) \(problem.status)\(request)"
        case .transport(let cause): return "no answer from the gateway: \(cause)"
        case .unexpectedAnswer(let status): return "unexpected gateway answer \(status)\(request)"
        case .notSignedIn: return "no bearer token (signed out)"
        case .invalidRequest(let what): return "invalid request: \(what)"
        }
    }
}
