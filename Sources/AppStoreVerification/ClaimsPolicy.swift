/// The app-identity rules applied after the signature verified, decided as
/// Apple's SignedDataVerifier does, generalised to several allowed
/// environments: a payload is judged as if by Apple's verifier for its own
/// environment when that environment is allowed, otherwise by the verifier for
/// Production (if allowed). Order: bundle id, then (Production) appAppleId,
/// then environment, so the same inputs give the same class of error as Apple.
struct ClaimsPolicy: Sendable {
    let bundleId: String
    let appAppleId: Int64?
    let allowedEnvironments: Set<AppStoreEnvironment>

    init(configuration: VerifierConfiguration) {
        bundleId = configuration.bundleId
        appAppleId = configuration.appAppleId
        allowedEnvironments = configuration.allowedEnvironments
    }

    /// What to compare for one kind of payload.
    enum Checks {
        /// Transactions: bundle id and environment.
        case bundleAndEnvironment
        /// Renewal info carries no bundle id: environment only.
        case environmentOnly
        /// Notifications and app transactions: bundle id, appAppleId (Production), environment.
        case bundleAppAppleIdAndEnvironment
    }

    func check(
        _ checks: Checks, bundleId payloadBundleId: String?, appAppleId payloadAppAppleId: Int64?,
        environment: AppStoreEnvironment?
    ) throws(VerificationFailure) {
        let isAllowed = environment.map(allowedEnvironments.contains) ?? false
        let judgedAsProduction = isAllowed ? environment == .production : allowedEnvironments.contains(.production)
        switch checks {
        case .bundleAndEnvironment:
            guard payloadBundleId == bundleId else { throw .wrongBundle }
        case .environmentOnly:
            break
        case .bundleAppAppleIdAndEnvironment:
            guard payloadBundleId == bundleId else { throw .wrongBundle }
            if judgedAsProduction && payloadAppAppleId != appAppleId { throw .wrongAppAppleId }
        }
        guard isAllowed else { throw .wrongEnvironment }
    }
}
