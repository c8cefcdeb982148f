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
        help: "Comma-separated certificate identities (subjectAltName DNS names or URIs) allowed to call Spend and ReverseSpend; "
            + "empty: nobody.")

    /// The settings the policy and the server's TLS read.
    static let optionSpecs = [
        StandardOptions.internalAuth, StandardOptions.tlsClientCA, StandardOptions.paymentsIdentity, StandardOptions.gatewayIdentity,
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
            PointsMethods.getCatalog.descriptor: .only([gateway, payments]),
            PointsMethods.listPackages.descriptor: .only([gateway]),
            PointsMethods.listLedger.descriptor: .only([gateway]),
        ])
    }

    static func make(_ options: CommandLineOptions) throws -> CallerPolicy {
        make(payments: try CallerPolicy.identity(options.required("PAYMENTS_IDENTITY"), setting: "PAYMENTS_IDENTITY"),
             gateway: try CallerPolicy.identity(options.required("GATEWAY_IDENTITY"), setting: "GATEWAY_IDENTITY"),
             spendCallers: try CallerPolicy.identities(options.value("POINTS_SPEND_CALLERS") ?? "", setting: "POINTS_SPEND_CALLERS"))
    }
}
