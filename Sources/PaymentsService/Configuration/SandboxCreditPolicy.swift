import AppStoreVerification
import Foundation

/// Decides whether a verified purchase becomes real credits, from its App
/// Store environment and its user. Pure: no I/O, built once at start-up.
///
/// Sandbox purchases cost nothing (TestFlight testers and App Review buy in
/// Sandbox, and Apple signs them with its production PKI), so a deployment
/// that also accepts Production credits a Sandbox purchase only for the users
/// in `APPLE_SANDBOX_USER_IDS`. The three deployment shapes:
///
/// | deployment (`APPLE_ENVIRONMENTS`) | Production | Sandbox |
/// |---|---|---|
/// | `Production` | credited | refused (the verifier refuses it first) |
/// | `Production,Sandbox` | credited | listed users only |
/// | `Sandbox` (staging) | refused (not accepted) | everyone |
///
/// Xcode and LocalTesting are credited for everyone when the deployment
/// accepts them in local-testing mode: only `APPLE_LOCAL_TESTING=1` lets them
/// through the verifier, their signatures chain to a locally trusted CA
/// rather than Apple's, and that mode is never set in production, so no
/// balance there is real. The local demo (`scripts/run.sh`) buys in Xcode as
/// a fresh user next to an accepted Production. Any other environment a
/// deployment accepts is treated like Sandbox.
struct SandboxCreditPolicy: Sendable, Equatable {
    /// What to do with a verified purchase.
    enum Decision: Equatable, Sendable {
        case credit
        /// The deployment does not accept the environment at all (the JWS
        /// verifier refuses such a purchase before this policy is asked).
        case refuseEnvironmentNotAccepted
        /// A Sandbox purchase in a deployment that also accepts Production,
        /// by a user not in `APPLE_SANDBOX_USER_IDS`.
        case refuseUserNotListed

        /// A stable code for log lines.
        var logCode: String {
            switch self {
            case .credit: "credit"
            case .refuseEnvironmentNotAccepted: "environment_not_accepted"
            case .refuseUserNotListed: "user_not_in_sandbox_allow_list"
            }
        }
    }

    /// The environments the deployment accepts (`APPLE_ENVIRONMENTS`).
    let acceptedEnvironments: Set<AppStoreEnvironment>
    /// Users whose Sandbox purchases are credited next to Production
    /// (`APPLE_SANDBOX_USER_IDS`: App Review and testers).
    let sandboxUserIds: Set<UUID>
    /// `APPLE_LOCAL_TESTING=1`: Xcode/LocalTesting may be accepted.
    let localTestingMode: Bool

    init(acceptedEnvironments: Set<AppStoreEnvironment>, sandboxUserIds: Set<UUID>, localTestingMode: Bool) {
        self.acceptedEnvironments = acceptedEnvironments
        self.sandboxUserIds = sandboxUserIds
        self.localTestingMode = localTestingMode
    }

    /// The policy of a deployment whose verifier runs with `configuration`.
    init(configuration: VerifierConfiguration, sandboxUserIds: Set<UUID>) {
        self.init(
            acceptedEnvironments: configuration.allowedEnvironments, sandboxUserIds: sandboxUserIds,
            localTestingMode: configuration.localTestingMode)
    }

    /// True when real money can arrive here, so free purchases must not
    /// turn into real balances.
    var acceptsProduction: Bool { acceptedEnvironments.contains(.production) }

    func decide(environment: AppStoreEnvironment, userId: UUID) -> Decision {
        guard acceptedEnvironments.contains(environment) else { return .refuseEnvironmentNotAccepted }
        if environment == .production { return .credit }
        if environment.isLocal { return localTestingMode ? .credit : .refuseEnvironmentNotAccepted }
        // Sandbox (and any future non-production environment).
        if !acceptsProduction { return .credit }
        return sandboxUserIds.contains(userId) ? .credit : .refuseUserNotListed
    }
}
