import AppStoreVerification
import Foundation
import ServiceKit

/// Builds the JWS verifier's configuration from the operator settings
/// `APPLE_BUNDLE_ID`, `APPLE_APP_APPLE_ID`, `APPLE_ENVIRONMENTS`,
/// `APPLE_ROOT_CERTS`, `APPLE_ONLINE_CHECKS` and `APPLE_LOCAL_TESTING`, and
/// reads `APPLE_SANDBOX_USER_IDS` for the `SandboxCreditPolicy`.
enum AppleVerificationSettings {
    /// The bundled production trust anchor (Apple Root CA G3), relative to
    /// the working directory unless `APPLE_ROOT_CERTS` says otherwise.
    static let defaultRootPath = "config/AppleRootCA-G3.cer"

    static let optionSpecs: [OptionSpec] = [
        OptionSpec(flag: nil, env: "APPLE_BUNDLE_ID", help: "The app's bundle id; signed data for any other bundle is refused."),
        OptionSpec(flag: nil, env: "APPLE_APP_APPLE_ID", help: "The app's numeric App Store id (required when Production is allowed)."),
        OptionSpec(flag: nil, env: "APPLE_ENVIRONMENTS", default: "Production",
                   help: "Comma-separated environments accepted: Production, Sandbox (Xcode, LocalTesting need APPLE_LOCAL_TESTING=1). "
                       + "With Production, Sandbox purchases are credited only to APPLE_SANDBOX_USER_IDS; without it, to everyone."),
        OptionSpec(flag: nil, env: "APPLE_ROOT_CERTS", default: defaultRootPath,
                   help: "Comma-separated paths of trusted root certificates (DER or PEM)."),
        OptionSpec(flag: nil, env: "APPLE_ONLINE_CHECKS", default: "0",
                   help: "1 to check leaf and intermediate with OCSP (effective date now); 0 to use the payload's signedDate."),
        OptionSpec(flag: nil, env: "APPLE_LOCAL_TESTING", default: "0",
                   help: "1 to accept the Xcode/LocalTesting environments (verified against APPLE_ROOT_CERTS). Never in production."),
    ]

    static let sandboxUserIdsSpec = OptionSpec(
        flag: nil, env: "APPLE_SANDBOX_USER_IDS",
        help: "Comma-separated user ids (UUIDs: App Review, testers) whose Sandbox/TestFlight purchases are credited "
            + "when APPLE_ENVIRONMENTS also has Production; a deployment without Production credits every user.")

    /// The verifier the settings describe (reads the root certificates).
    static func verifier(_ options: CommandLineOptions) throws -> SignedDataVerifier {
        try SignedDataVerifier(configuration: verifierConfiguration(
            bundleId: try options.required("APPLE_BUNDLE_ID"), appAppleId: options.value("APPLE_APP_APPLE_ID"),
            environments: try options.required("APPLE_ENVIRONMENTS"), rootPaths: try options.required("APPLE_ROOT_CERTS"),
            onlineChecks: options.value("APPLE_ONLINE_CHECKS") ?? "0", localTesting: options.value("APPLE_LOCAL_TESTING") ?? "0"))
    }

    /// The Sandbox credit policy of a deployment verifying with `verifier`.
    static func creditPolicy(_ options: CommandLineOptions, verifier: SignedDataVerifier) throws -> SandboxCreditPolicy {
        SandboxCreditPolicy(configuration: verifier.configuration, sandboxUserIds: try sandboxUserIds(options.value("APPLE_SANDBOX_USER_IDS") ?? ""))
    }

    /// The most user ids `APPLE_SANDBOX_USER_IDS` may list (App Review and a
    /// team of testers need a handful).
    static let sandboxUserIdsMax = 1_000

    /// `APPLE_SANDBOX_USER_IDS`: comma-separated user UUIDs (spaces and empty
    /// entries ignored). A malformed entry is named in the error, so a typo
    /// stops start-up instead of silently refusing a reviewer's purchase.
    static func sandboxUserIds(_ text: String) throws(CommandLineError) -> Set<UUID> {
        let entries = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard entries.count <= sandboxUserIdsMax else {
            throw CommandLineError("APPLE_SANDBOX_USER_IDS lists \(entries.count) user ids; at most \(sandboxUserIdsMax) are allowed")
        }
        var ids: Set<UUID> = []
        for entry in entries {
            guard let id = UUID(uuidString: entry) else {
                throw CommandLineError(
                    "APPLE_SANDBOX_USER_IDS entry \(String(reflecting: shown(entry))) is not a user id; "
                        + "expected comma-separated UUIDs such as 123e4567-e89b-12d3-a456-426614174000")
            }
            ids.insert(id)
        }
        return ids
    }

    /// A bad entry as the start-up error shows it: at most 64 characters, and
    /// an email address (a reviewer's login listed by mistake) masked, since
    /// no email reaches this system's output.
    private static func shown(_ entry: String) -> String {
        if let at = entry.firstIndex(of: "@") {
            return String(entry.prefix(1)) + "***" + String(entry[at...].prefix(64))
        }
        return entry.count > 64 ? String(entry.prefix(64)) + "..." : entry
    }

    static func verifierConfiguration(
        bundleId: String,
        appAppleId: String?,
        environments: String,
        rootPaths: String,
        onlineChecks: String,
        localTesting: String
    ) throws -> VerifierConfiguration {
        let parsedEnvironments = environments.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .map(AppStoreEnvironment.init(rawValue:))
        let known: Set<AppStoreEnvironment> = [.production, .sandbox, .xcode, .localTesting]
        for environment in parsedEnvironments where !known.contains(environment) {
            throw CommandLineError("unknown environment \(environment.rawValue) in APPLE_ENVIRONMENTS")
        }
        var appId: Int64?
        if let appAppleId, !appAppleId.isEmpty {
            guard let parsed = Int64(appAppleId), parsed > 0 else { throw CommandLineError("APPLE_APP_APPLE_ID must be a positive integer") }
            appId = parsed
        }
        let paths = rootPaths.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let roots: [Data]
        do {
            roots = try VerifierConfiguration.loadRoots(paths: paths)
        } catch {
            throw CommandLineError("cannot load APPLE_ROOT_CERTS: \(error)")
        }
        return VerifierConfiguration(
            bundleId: bundleId,
            appAppleId: appId,
            allowedEnvironments: Set(parsedEnvironments),
            localTestingMode: try flag(localTesting, name: "APPLE_LOCAL_TESTING"),
            onlineChecks: try flag(onlineChecks, name: "APPLE_ONLINE_CHECKS"),
            trustedRoots: roots)
    }

    static func flag(_ text: String, name: String) throws -> Bool {
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off", "": return false
        default: throw CommandLineError("\(name) must be 0 or 1")
        }
    }
}
