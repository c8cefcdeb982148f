import Contracts
import ServiceKit

/// Who may call each `points.v1.Points` method (docs/ARCHITECTURE.md,
/// "Internal authentication"): money moves in only from PaymentsService,
/// out only for the configured spend callers; the public reads are the
/// gateway's, plus the two PaymentsService needs, and a purchase's
/// consumption is PaymentsService's alone (Apple's CONSUMPTION_REQUEST); health checks are open.
enum PointsCallerPolicy {
    static let spendCallers = OptionSpec(
        flag: nil, env: "POINTS_SPEND_CALLERS",
        help:
            "Comma-separated certificate identities (subjectAltName DNS names or URIs) allowed to call Spend and ReverseSpend; "
            + "empty: nobody.")

    /// The settings the policy and the server's TLS read.
    static let optionSpecs = [
        StandardOptions.internalAuth, StandardOptions.tlsClientCA, StandardOptions.paymentsIdentity,
        StandardOptions.gatewayIdentity,
        spendCallers,
    ]

    static func make(payments: String, gateway: String, spendCallers: Set<String>) -> CallerPolicy {
        CallerPolicy([
            HealthMethods.check.descriptor: .anyone,
            PointsMethods.grant.descriptor: .only([payments]),
            PointsMethods.clawback.descriptor: .only([payments]),
            PointsMethods.reverseClawback.descriptor: .only([payments]),
            PointsMethods.getPurchaseConsumption.descriptor: .only([payments]),
            PointsMethods.spend.descriptor: .only(spendCallers),
            PointsMethods.reverseSpend.descriptor: .only(spendCallers),
            PointsMethods.getBalance.descriptor: .only([gateway, payments]),
            PointsMethods.getBalances.descriptor: .only([gateway]),
            PointsMethods.getCatalog.descriptor: .only([gateway, payments]),
            PointsMethods.listPackages.descriptor: .only([gateway]),
            PointsMethods.listLedger.descriptor: .only([gateway]),
        ])
    }

    static func make(_ options: CommandLineOptions) throws(SettingsError) -> CallerPolicy {
        return try SettingsCollector.reading(options) { read(&$0) }
    }

    /// The policy from `PAYMENTS_IDENTITY`, `GATEWAY_IDENTITY` and
    /// `POINTS_SPEND_CALLERS`, reporting every problem to `settings`.
    static func read(_ settings: inout SettingsCollector) -> CallerPolicy? {
        func identity(_ name: String, _ reason: String) -> String? {
            guard let text = settings.required(name, because: reason) else { return nil }
            return settings.read { () throws(SettingProblem) in try CallerPolicy.identity(text, setting: name) }
        }
        let payments = identity("PAYMENTS_IDENTITY", "it is the only caller allowed to grant and claw back credits")
        let gateway = identity("GATEWAY_IDENTITY", "it is the caller allowed to read balances, packages and ledgers")
        let spendText = settings.value("POINTS_SPEND_CALLERS") ?? ""
        let spend = settings.read { () throws(SettingProblem) in
            try CallerPolicy.identities(spendText, setting: "POINTS_SPEND_CALLERS")
        }
        guard let payments, let gateway, let spend else { return nil }
        // One identity, one role: a typo that names the internet-facing
        // gateway as PaymentsService or as a spend caller would hand it grants,
        // clawbacks or spends.
        let roleReason = "each certificate identity has one role: the gateway must not grant, claw back or spend"
        var problems: [SettingProblem] = []
        if gateway == payments {
            problems.append(
                SettingProblem("GATEWAY_IDENTITY", "must differ from PAYMENTS_IDENTITY", because: roleReason))
        }
        for role in [(payments, "PAYMENTS_IDENTITY"), (gateway, "GATEWAY_IDENTITY")] where spend.contains(role.0) {
            problems.append(
                SettingProblem("POINTS_SPEND_CALLERS", "must not name \(role.1) (\(role.0))", because: roleReason))
        }
        for problem in problems { settings.report(problem) }
        guard problems.isEmpty else { return nil }
        return make(payments: payments, gateway: gateway, spendCallers: spend)
    }
}
