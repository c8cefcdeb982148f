import AppStoreVerification
import Foundation
import ServiceKit

/// Builds the JWS verifier's configuration from the operator settings
/// `APPLE_BUNDLE_ID`, `APPLE_APP_APPLE_ID`, `APPLE_ENVIRONMENTS`,
/// `APPLE_ROOT_CERTS`, `APPLE_ONLINE_CHECKS` and `APPLE_LOCAL_TESTING`,
/// reads `APPLE_SANDBOX_USER_IDS` for the `SandboxCreditPolicy`, and builds
/// the app receipts' signature check from `APPLE_RECEIPT_ROOT_CERTS`.
enum AppleVerificationSettings {
    /// The bundled production trust anchor (Apple Root CA G3), relative to
    /// the working directory unless `APPLE_ROOT_CERTS` says otherwise.
    static let defaultRootPath = "config/AppleRootCA-G3.cer"

    /// The bundled anchors of StoreKit 1 app receipts: Apple Inc. Root,
    /// which Apple's RSA receipt-signing chains end at, and G3 beside it so
    /// that a receipt chain Apple moves to its newer root keeps verifying
    /// (the chain's Apple markers are checked whatever the root).
    static let defaultReceiptRootPaths = "config/AppleIncRootCertificate.cer,config/AppleRootCA-G3.cer"

    static let optionSpecs: [OptionSpec] = [
        OptionSpec(
            flag: nil, env: "APPLE_BUNDLE_ID", help: "The app's bundle id; signed data for any other bundle is refused."
        ),
        OptionSpec(
            flag: nil, env: "APPLE_APP_APPLE_ID",
            help: "The app's numeric App Store id (required when Production is allowed)."),
        OptionSpec(
            flag: nil, env: "APPLE_ENVIRONMENTS", default: "Production",
            help:
                "Comma-separated environments accepted: Production, Sandbox (Xcode, LocalTesting need APPLE_LOCAL_TESTING=1). "
                + "With Production, Sandbox purchases are credited only to APPLE_SANDBOX_USER_IDS; without it, to everyone."
        ),
        OptionSpec(
            flag: nil, env: "APPLE_ROOT_CERTS", default: defaultRootPath,
            help: "Comma-separated paths of trusted root certificates (DER or PEM)."),
        OptionSpec(
            flag: nil, env: "APPLE_RECEIPT_ROOT_CERTS", default: defaultReceiptRootPaths,
            help:
                "Comma-separated paths of the root certificates (DER or PEM) StoreKit 1 app receipts must be signed under."
        ),
        OptionSpec(
            flag: nil, env: "APPLE_ONLINE_CHECKS", default: "0",
            help: "1 to check leaf and intermediate with OCSP (effective date now); 0 to use the payload's signedDate."),
        OptionSpec(
            flag: nil, env: "APPLE_LOCAL_TESTING", default: "0",
            help:
                "1 to accept the Xcode/LocalTesting environments (verified against APPLE_ROOT_CERTS). Never in production."
        ),
    ]

    static let sandboxUserIdsSpec = OptionSpec(
        flag: nil, env: "APPLE_SANDBOX_USER_IDS",
        help: "Comma-separated user ids (UUIDs: App Review, testers) whose Sandbox/TestFlight purchases are credited "
            + "when APPLE_ENVIRONMENTS also has Production; a deployment without Production credits every user.")

    static let bundleIdReason = "signed purchases of any other app are refused"

    /// The verifier the settings describe (reads the root certificates).
    static func verifier(_ options: CommandLineOptions) throws(SettingsError) -> SignedDataVerifier {
        return try SettingsCollector.reading(options) { verifier(&$0) }
    }

    /// The verifier, reporting every problem of the `APPLE_*` settings to `settings`.
    static func verifier(_ settings: inout SettingsCollector) -> SignedDataVerifier? {
        guard let configuration = configuration(&settings) else { return nil }
        do {
            return try SignedDataVerifier(configuration: configuration)
        } catch {
            settings.report(problem(error))
            return nil
        }
    }

    /// The verifier's configuration; every rule of `VerifierConfiguration`
    /// is checked here too, so that all problems are reported together.
    static func configuration(_ settings: inout SettingsCollector) -> VerifierConfiguration? {
        let problemsBefore = settings.problems.count
        let bundleId = settings.required("APPLE_BUNDLE_ID", because: bundleIdReason)
        var appId: Int64??
        if let text = settings.value("APPLE_APP_APPLE_ID") {
            if let parsed = Int64(text), parsed > 0 {
                appId = .some(parsed)
            } else {
                settings.report(
                    SettingProblem(
                        "APPLE_APP_APPLE_ID", "must be a positive whole number (the app's App Store id)",
                        because: "Apple signs the app's numeric id into production data"))
            }
        } else {
            appId = .some(nil)
        }
        let environments = self.environments(&settings)
        let roots = self.roots(&settings, setting: "APPLE_ROOT_CERTS", because: rootsReason)
        let online = flag(
            &settings, "APPLE_ONLINE_CHECKS", because: "1 checks Apple's certificates with OCSP at verification time")
        let local = flag(
            &settings, "APPLE_LOCAL_TESTING",
            because: "only a local test deployment accepts purchases signed by a local CA")
        if let environments, environments.contains(.production), case .some(nil) = appId {
            settings.report(
                SettingProblem(
                    "APPLE_APP_APPLE_ID", "must be set when APPLE_ENVIRONMENTS includes Production",
                    because: "Apple signs the app's numeric id into production data"))
        }
        if let environments, environments.contains(where: \.isLocal), local == false {
            settings.report(
                SettingProblem(
                    "APPLE_LOCAL_TESTING", "must be 1 when APPLE_ENVIRONMENTS includes Xcode or LocalTesting",
                    because: "those purchases are signed by a local CA, which a production deployment never trusts"))
        }
        guard let bundleId, let appId, let environments, let roots, let online, let local,
            settings.problems.count == problemsBefore
        else { return nil }
        return VerifierConfiguration(
            bundleId: bundleId, appAppleId: appId, allowedEnvironments: environments, localTestingMode: local,
            onlineChecks: online, trustedRoots: roots)
    }

    /// `APPLE_ENVIRONMENTS`: known names, at least one.
    private static func environments(_ settings: inout SettingsCollector) -> Set<AppStoreEnvironment>? {
        let reason = "purchases from any other App Store environment are refused"
        guard let text = settings.required("APPLE_ENVIRONMENTS", because: reason) else { return nil }
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let known: Set<AppStoreEnvironment> = [.production, .sandbox, .xcode, .localTesting]
        let parsed = Set(names.map(AppStoreEnvironment.init(rawValue:)))
        guard !parsed.isEmpty, parsed.isSubset(of: known) else {
            settings.report(
                SettingProblem(
                    "APPLE_ENVIRONMENTS", "must be a comma-separated list of Production, Sandbox, Xcode, LocalTesting",
                    because: reason))
            return nil
        }
        return parsed
    }

    static let rootsReason = "Apple's signed data must chain to one of these roots"
    static let receiptRootsReason = "an app receipt is credited only when Apple signed it under one of these roots"

    /// The signature check of StoreKit 1 app receipts (`APPLE_RECEIPT_ROOT_CERTS`).
    static func receiptVerifier(_ settings: inout SettingsCollector) -> AppReceiptSignatureVerifier? {
        let setting = "APPLE_RECEIPT_ROOT_CERTS"
        guard let roots = roots(&settings, setting: setting, because: receiptRootsReason) else { return nil }
        do {
            return try AppReceiptSignatureVerifier(trustedRootsDER: roots)
        } catch {
            settings.report(problem(error, rootsSetting: setting, because: receiptRootsReason))
            return nil
        }
    }

    /// `setting`: comma-separated paths, every file readable and a certificate.
    private static func roots(_ settings: inout SettingsCollector, setting: String, because reason: String) -> [Data]? {
        guard let text = settings.required(setting, because: reason) else { return nil }
        let paths = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        do throws(ConfigurationError) {
            let roots = try VerifierConfiguration.loadRoots(paths: paths)
            guard !roots.isEmpty else { throw ConfigurationError.noTrustedRoots }
            return roots
        } catch {
            settings.report(problem(error, rootsSetting: setting, because: reason))
            return nil
        }
    }

    /// `0` or `1` (also true/false, yes/no, on/off).
    private static func flag(_ settings: inout SettingsCollector, _ name: String, because reason: String) -> Bool? {
        let text = settings.value(name) ?? "0"
        guard let value = try? flag(text, name: name) else {
            settings.report(SettingProblem(name, "must be 0 or 1", because: reason))
            return nil
        }
        return value
    }

    /// The verifier's own refusal as a sentence naming the setting.
    static func problem(
        _ error: ConfigurationError, rootsSetting: String = "APPLE_ROOT_CERTS",
        because roots: String = rootsReason
    ) -> SettingProblem {
        switch error {
        case .unreadableRootFile(let path):
            return SettingProblem(rootsSetting, "must name readable files (\(path) is not)", because: roots)
        case .invalidRootCertificate(let path):
            return SettingProblem(
                rootsSetting, "must name DER or PEM certificates (\(path) is not one)", because: roots)
        case .noTrustedRoots: return SettingProblem(rootsSetting, "must name at least one certificate", because: roots)
        case .invalidTrustedRoot(let index):
            return SettingProblem(
                rootsSetting, "must name certificates usable as trust anchors (#\(index + 1) is not)", because: roots)
        case .noAllowedEnvironments:
            return SettingProblem(
                "APPLE_ENVIRONMENTS", "must name at least one environment",
                because: "purchases from any other App Store environment are refused")
        case .missingAppAppleId:
            return SettingProblem(
                "APPLE_APP_APPLE_ID", "must be set when APPLE_ENVIRONMENTS includes Production",
                because: "Apple signs the app's numeric id into production data")
        case .localEnvironmentWithoutLocalTestingMode:
            return SettingProblem(
                "APPLE_LOCAL_TESTING", "must be 1 when APPLE_ENVIRONMENTS includes Xcode or LocalTesting",
                because: "those purchases are signed by a local CA, which a production deployment never trusts")
        }
    }

    /// The most user ids `APPLE_SANDBOX_USER_IDS` may list (App Review and a
    /// team of testers need a handful).
    static let sandboxUserIdsMax = 1_000

    /// `APPLE_SANDBOX_USER_IDS`: comma-separated user UUIDs (spaces and empty
    /// entries ignored). A malformed entry is named in the error, so a typo
    /// stops start-up instead of silently refusing a reviewer's purchase.
    static func sandboxUserIds(_ text: String) throws(SettingProblem) -> Set<UUID> {
        let reason =
            "exactly these users' Sandbox purchases are credited next to Production, so a typo would refuse a reviewer's purchase"
        let entries = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard entries.count <= sandboxUserIdsMax else {
            throw SettingProblem(
                "APPLE_SANDBOX_USER_IDS", "must list at most \(sandboxUserIdsMax) user ids (it lists \(entries.count))",
                because: reason)
        }
        var ids: Set<UUID> = []
        for entry in entries {
            guard let id = UUID(uuidString: entry) else {
                throw SettingProblem(
                    "APPLE_SANDBOX_USER_IDS",
                    "must be comma-separated UUIDs such as 123e4567-e89b-12d3-a456-426614174000 (entry \(String(reflecting: shown(entry))) is not one)",
                    because: reason)
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

    static func flag(_ text: String, name: String) throws -> Bool {
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off", "": return false
        default: throw CommandLineError("\(name) must be 0 or 1")
        }
    }
}
