import AppStoreServerAPI
import ServiceKit

/// Whether PaymentsService answers Apple's CONSUMPTION_REQUEST (Send
/// Consumption Information v2) and with which refund preference. Off by
/// default: answering is the operator's decision (and needs the App Store
/// Server API settings); a user's consent is still required for each answer.
struct ConsumptionSettings: Sendable, Equatable {
    var enabled = false
    var refundPreference: ConsumptionRequest.RefundPreference?
    /// How long after a transient failure an answer is tried again (within Apple's 12 hours).
    var retry: Duration = .seconds(60)
    /// Apple's `sampleContentProvided`: the app gave a free sample or trial
    /// of the content before the purchase (e.g. credits at sign-up).
    var sampleContentProvided = false

    static let refundPreferences: [ConsumptionRequest.RefundPreference] = [.decline, .grantFull, .grantProrated]

    static let optionSpecs: [OptionSpec] = [
        OptionSpec(
            flag: nil, env: "CONSUMPTION_ANSWERS", default: "off",
            help:
                "on: answer Apple's CONSUMPTION_REQUEST for users who consented (needs APPLE_API_*); off: never answer."
        ),
        OptionSpec(
            flag: nil, env: "CONSUMPTION_REFUND_PREFERENCE", default: "",
            help:
                "refundPreference sent with consumption answers: DECLINE, GRANT_FULL, GRANT_PRORATED, or empty to send none."
        ),
        OptionSpec(
            flag: nil, env: "CONSUMPTION_RETRY_SECONDS", default: "60",
            help:
                "Delay before a consumption answer that failed transiently is sent again (1...3600; within Apple's 12 hours)."
        ),
        OptionSpec(
            flag: nil, env: "CONSUMPTION_SAMPLE_CONTENT_PROVIDED", default: "off",
            help:
                "on: tell Apple the app gives a free sample or trial of the content before purchase (e.g. free credits at sign-up); off: it does not."
        ),
    ]

    init() {}

    init(_ options: CommandLineOptions) throws(SettingsError) {
        self = try SettingsCollector.reading(options) { Self.read(&$0) }
    }

    /// Reads the four settings, reporting each problem to `settings`.
    static func read(_ settings: inout SettingsCollector) -> ConsumptionSettings? {
        let enabled = settings.choice(
            "CONSUMPTION_ANSWERS", ["on": true, "off": false],
            because: "answering Apple's refund questions with a user's consumption is the operator's decision")
        var preference: ConsumptionRequest.RefundPreference??
        let preferenceText = settings.value("CONSUMPTION_REFUND_PREFERENCE") ?? ""
        if preferenceText.isEmpty {
            preference = .some(nil)
        } else if let known = refundPreferences.first(where: { $0.rawValue == preferenceText }) {
            preference = .some(known)
        } else {
            settings.report(
                SettingProblem(
                    "CONSUMPTION_REFUND_PREFERENCE", "must be DECLINE, GRANT_FULL, GRANT_PRORATED or empty",
                    because: "it is the refund preference Apple receives with each consumption answer"))
        }
        let retry = settings.integer(
            "CONSUMPTION_RETRY_SECONDS", in: 1...3600, unit: "of seconds",
            because: "a failed answer is sent again after it, well within Apple's 12 hours")
        let sample = settings.choice(
            "CONSUMPTION_SAMPLE_CONTENT_PROVIDED", ["on": true, "off": false],
            because:
                "it is Apple's sampleContentProvided in each consumption answer, a fact of the app only the operator knows"
        )
        guard let enabled, let preference, let retry, let sample else { return nil }
        var result = ConsumptionSettings()
        result.enabled = enabled
        result.refundPreference = preference
        result.retry = .seconds(retry)
        result.sampleContentProvided = sample
        return result
    }
}
