import Contracts
import RPCCore
import ServiceKit

/// Who may call each `payments.v1.Payments` method (docs/ARCHITECTURE.md,
/// "Internal authentication"): all of them are the gateway's; health
/// checks are open.
enum PaymentsCallerPolicy {
    /// The settings the policy and the server's TLS read.
    static let optionSpecs = [
        StandardOptions.internalAuth, StandardOptions.tlsClientCA, StandardOptions.gatewayIdentity,
    ]

    static func make(gateway: String) -> CallerPolicy {
        var rules: [MethodDescriptor: CallerPolicy.Callers] = [HealthMethods.check.descriptor: .anyone]
        for method in [
            PaymentsMethods.verifyTransaction.descriptor, PaymentsMethods.getTransaction.descriptor,
            PaymentsMethods.handleNotification.descriptor, PaymentsMethods.getAccountToken.descriptor,
            PaymentsMethods.listTransactions.descriptor, PaymentsMethods.verifyReceipt.descriptor,
            PaymentsMethods.setConsumptionConsent.descriptor, PaymentsMethods.getConsumptionConsent.descriptor,
        ] {
            rules[method] = .only([gateway])
        }
        return CallerPolicy(rules)
    }

    static func make(_ options: CommandLineOptions) throws(SettingsError) -> CallerPolicy {
        return try SettingsCollector.reading(options) { read(&$0) }
    }

    /// The policy from `GATEWAY_IDENTITY`, reporting a problem to `settings`.
    static func read(_ settings: inout SettingsCollector) -> CallerPolicy? {
        guard
            let text = settings.required(
                "GATEWAY_IDENTITY", because: "the gateway is the only caller of PaymentsService")
        else { return nil }
        return settings.read { () throws(SettingProblem) in try CallerPolicy.identity(text, setting: "GATEWAY_IDENTITY")
        }.map { make(gateway: $0) }
    }
}
