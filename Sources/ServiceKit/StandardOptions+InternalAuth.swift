/// The settings of internal authentication (docs/ARCHITECTURE.md,
/// "Internal authentication"), spelled once for every service.
extension StandardOptions {
    public static let internalAuth = OptionSpec(
        flag: "--internal-auth", env: "INTERNAL_AUTH", default: InternalAuthMode.mutualTLS.rawValue,
        help: "mtls: callers must present a certificate of the internal CA and are authorised per method; "
            + "off: cleartext without caller authentication, refused unless every address is loopback.")
    public static let tlsClientCA = OptionSpec(
        flag: "--tls-client-ca", env: "TLS_CLIENT_CA",
        help: "PEM CA bundle callers' client certificates must chain to (required with INTERNAL_AUTH=mtls).")
    public static let pointsTLSCA = OptionSpec(
        flag: nil, env: "POINTS_TLS_CA",
        help: "PEM CA bundle PointsService's certificate must chain to (required with INTERNAL_AUTH=mtls).")
    public static let pointsTLSServerName = OptionSpec(
        flag: nil, env: "POINTS_TLS_SERVER_NAME", default: "points",
        help: "The name PointsService's certificate must carry (subjectAltName DNS), whatever address is dialled.")
    public static let paymentsTLSServerName = OptionSpec(
        flag: nil, env: "PAYMENTS_TLS_SERVER_NAME", default: "payments",
        help: "The name PaymentsService's certificate must carry (subjectAltName DNS), whatever address is dialled.")
    public static let gatewayIdentity = OptionSpec(
        flag: nil, env: "GATEWAY_IDENTITY", default: "gateway",
        help: "The gateway's certificate identity (a subjectAltName DNS name or URI): the caller of the public reads.")
    public static let paymentsIdentity = OptionSpec(
        flag: nil, env: "PAYMENTS_IDENTITY", default: "payments",
        help:
            "PaymentsService's certificate identity (a subjectAltName DNS name or URI): the only caller of Grant and Clawback."
    )
}
