import AppStoreServerAPI
import Foundation
import Logging
import ServiceKit

/// The App Store Server API settings of PaymentsService and its admin
/// commands. The key trio (`APPLE_API_KEY_PATH`, `APPLE_API_KEY_ID`,
/// `APPLE_API_ISSUER_ID`) is optional for the service: without it the
/// service runs as before and the jobs that need Apple's view are off.
/// Some but not all of the three, or a key that is not a PKCS#8 P-256
/// `.p8`, stops start-up with a message naming the setting (never the key).
enum AppStoreAPISettings {
    typealias Variable = AppStoreServerAPIConfiguration.Variable

    static let keySettings = [Variable.keyPath, Variable.keyID, Variable.issuerID]

    static let optionSpecs: [OptionSpec] = [
        OptionSpec(
            flag: nil, env: Variable.keyPath,
            help:
                "The In-App Purchase key from App Store Connect (.p8, PKCS#8 P-256) for the App Store Server API. With "
                + "APPLE_API_KEY_ID and APPLE_API_ISSUER_ID it turns on notification recovery and reconciliation; "
                + "unset, those jobs are off."),
        OptionSpec(flag: nil, env: Variable.keyID, help: "The key id of APPLE_API_KEY_PATH (App Store Connect, Keys)."),
        OptionSpec(
            flag: nil, env: Variable.issuerID, help: "The issuer id (a UUID) of the team's App Store Connect keys."),
        OptionSpec(
            flag: nil, env: Variable.productionURL,
            help:
                "App Store Server API base URL, production (default \(AppStoreServerEnvironment.production.defaultBaseURL))."
        ),
        OptionSpec(
            flag: nil, env: Variable.sandboxURL,
            help:
                "App Store Server API base URL, sandbox (default \(AppStoreServerEnvironment.sandbox.defaultBaseURL))."),
        OptionSpec(
            flag: nil, env: Variable.caPath,
            help: "PEM CA bundle the App Store Server API must chain to, instead of the system trust store (tests)."),
    ]

    /// The client configuration, or nil when none of the key settings is
    /// set. Reads the key file (start-up only). The client's events go to
    /// `logger`: retries and failures as warnings, the rest at debug; they
    /// carry method, path, status and Apple's error code, never a JWT.
    /// Each attempt is counted by `attempts` when given.
    static func configuration(
        _ options: CommandLineOptions, logger: Logger, attempts: AppStoreAPIAttemptRecorder? = nil
    ) throws(SettingsError) -> AppStoreServerAPIConfiguration? {
        var settings = SettingsCollector(options)
        let read = read(&settings)
        try settings.finish()
        guard var configuration = read ?? nil else { return nil }
        configuration.eventSink = { event in
            log(event, logger)
            attempts?.record(event)
        }
        return configuration
    }

    /// The client configuration without its event sink: `.some(nil)` when
    /// none of the key settings is set, nil when a problem was reported.
    static func read(_ settings: inout SettingsCollector) -> AppStoreServerAPIConfiguration?? {
        let reason = "the App Store Server API key is used only with its key id and issuer id; set all three or none"
        let present = keySettings.filter { settings.value($0) != nil }
        guard !present.isEmpty else { return .some(nil) }
        guard present.count == keySettings.count else {
            for missing in keySettings where !present.contains(missing) {
                settings.report(
                    SettingProblem(
                        missing,
                        "must be set when \(present.joined(separator: " and ")) \(present.count == 1 ? "is" : "are")",
                        because: reason))
            }
            return nil
        }
        // The same sentence as the verifier's, so it is reported once.
        guard settings.required(Variable.bundleID, because: AppleVerificationSettings.bundleIdReason) != nil else {
            return nil
        }
        var environment: [String: String] = [:]
        for name in keySettings + [Variable.bundleID, Variable.productionURL, Variable.sandboxURL, Variable.caPath] {
            if let value = settings.value(name) { environment[name] = value }
        }
        do {
            return .some(try AppStoreServerAPIConfiguration.fromEnvironment(environment))
        } catch {
            settings.report(
                SettingProblem(
                    error.setting, "must be usable (\(error.reason))",
                    because:
                        "PaymentsService calls the App Store Server API with it to recover notifications and reconcile purchases"
                ))
            return nil
        }
    }

    /// One client event as a log line.
    static func log(_ event: AppStoreServerAPIEvent, _ logger: Logger) {
        var fields = [
            "environment": event.environment.rawValue, "method": event.method, "path": event.path,
            "attempt": "\(event.attempt)",
        ]
        if let status = event.httpStatus { fields["http_status"] = "\(status)" }
        if let error = event.error {
            fields["error_kind"] = error.kind.rawValue
            if let code = error.apiErrorCode { fields["apple_error_code"] = "\(code)" }
        }
        if let wait = event.retryAfter { fields["retry_after_ms"] = "\(wait.wholeMilliseconds)" }
        switch event.kind {
        case .retry: logger.warning("App Store Server API call retried", fields)
        case .failed:
            if event.httpStatus == 401 {
                logger.critical(
                    "ALERT App Store Server API refused the key",
                    fields.merging(["alert": "app_store_api_unauthorized"]) { $1 })
            } else {
                logger.warning("App Store Server API call failed", fields)
            }
        case .attempt, .succeeded: logger.debug("App Store Server API \(event.kind.rawValue)", fields)
        }
    }
}
