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

    static let refundPreferences: [ConsumptionRequest.RefundPreference] = [.decline, .grantFull, .grantProrated]

    static let optionSpecs: [OptionSpec] = [
        OptionSpec(flag: nil, env: "CONSUMPTION_ANSWERS", default: "off",
                   help: "on: answer Apple's CONSUMPTION_REQUEST for users who consented (needs APPLE_API_*); off: never answer."),
        OptionSpec(flag: nil, env: "CONSUMPTION_REFUND_PREFERENCE", default: "",
                   help: "refundPreference sent with consumption answers: DECLINE, GRANT_FULL, GRANT_PRORATED, or empty to send none."),
        OptionSpec(flag: nil, env: "CONSUMPTION_RETRY_SECONDS", default: "60",
                   help: "Delay before a consumption answer that failed transiently is sent again (1...3600; within Apple's 12 hours)."),
    ]

    init() {}

    init(_ options: CommandLineOptions) throws {
        switch try options.required("CONSUMPTION_ANSWERS") {
        case "on": enabled = true
        case "off": enabled = false
        default: throw CommandLineError("CONSUMPTION_ANSWERS must be on or off")
        }
        let preference = options.value("CONSUMPTION_REFUND_PREFERENCE") ?? ""
        if !preference.isEmpty {
            guard let known = Self.refundPreferences.first(where: { $0.rawValue == preference }) else {
                throw CommandLineError("CONSUMPTION_REFUND_PREFERENCE must be DECLINE, GRANT_FULL, GRANT_PRORATED or empty")
            }
            refundPreference = known
        }
        guard let seconds = Int(try options.required("CONSUMPTION_RETRY_SECONDS")), (1...3600).contains(seconds) else {
            throw CommandLineError("CONSUMPTION_RETRY_SECONDS must be 1...3600")
        }
        retry = .seconds(seconds)
    }
}
