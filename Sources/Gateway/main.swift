// Gateway: the public JSON API (HTTP/1.1 and h2c on one port, or HTTPS with
// ALPN h2/http/1.1 when --tls-cert and --tls-key are given) in front of
// PointsService and PaymentsService. `Gateway --help` lists every setting;
// `Gateway mint-token --sub UUID --email EMAIL [--ttl SECONDS]` prints an
// HS256 development token. Prints "Gateway listening on HOST:PORT" on stdout once
// ready; SIGTERM/SIGINT stop it gracefully.
import AdminServer
import Foundation
import Logging
import Metrics
import HTTPServer
import RPCRuntime
import ServiceKit

// First thing: a SIGTERM from now on is remembered, never lost.
let termination = ShutdownSignal.install()

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("Gateway: \(message)\n".utf8))
    exit(code)
}

let environment = ProcessInfo.processInfo.environment
let options: CommandLineOptions
do {
    options = try CommandLineOptions(
        specs: GatewaySettings.specs, arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    fail("\(error)", code: 2)
}
if options.helpRequested {
    print(
        options.helpText(
            program: "Gateway",
            summary:
                "public JSON API for Apple in-app purchase credits (HTTP/1.1 and h2c, or TLS with ALPN h2 / http/1.1 given --tls-cert and --tls-key)",
            subcommands: [("mint-token", "print an HS256 dev token (--sub UUID --email EMAIL [--ttl SECONDS])")]))
    exit(0)
}

func readFile(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

switch options.positional.first {
case "mint-token":
    do {
        print(
            try GatewayCommandLine.mintToken(
                options: options, environment: environment, nowSeconds: HTTPServerClock.unixSeconds()))
        exit(0)
    } catch {
        ServiceRunner.refuse(program: "Gateway mint-token", error)
    }
case nil:
    break
case let other?:
    fail("unknown subcommand \(other) (see --help)", code: 2)
}

// Every setting is checked before anything starts; all problems at once, exit 2.
func readSettings(_ collector: inout SettingsCollector) -> (
    GatewaySettings, (verifier: JWTVerifier, emailIdentity: EmailIdentity)
)? {
    let settings = GatewaySettings.read(&collector)
    let authentication = GatewaySettings.authentication(&collector, readFile: readFile)
    guard let settings, let authentication else { return nil }
    return (settings, authentication)
}
let (settings, authentication) = ServiceRunner.settings(program: "Gateway", options: options, readSettings)
GatewayCommandLine.raiseOpenFileLimit()

let logger = Logger(service: "gateway", minimumLevel: settings.logLevel)
do {
    let registry = MetricsRegistry()
    let metrics = try GatewayMetrics(registry: registry)
    try CertificateExpiryCheck.check(
        [settings.tls, settings.pointsBackendTLS, settings.paymentsBackendTLS],
        metrics: metrics.certificates, logger: logger)
    let gateway = try GatewayRuntime(
        listen: settings.listen, pointsTargets: settings.pointsTargets, paymentsTargets: settings.paymentsTargets,
        verifier: authentication.verifier, emailIdentity: authentication.emailIdentity, logger: logger,
        connectionsMax: settings.connectionsMax, admission: settings.admission,
        backendConfiguration: RPCClient.Configuration(tls: settings.pointsBackendTLS),
        paymentsBackendConfiguration: RPCClient.Configuration(tls: settings.paymentsBackendTLS), tls: settings.tls,
        metrics: metrics)
    let readiness = gateway.readiness
    let admin = try await AdminListener.start(
        name: "Gateway", listen: settings.adminListen, registry: registry, logger: logger
    ) {
        AdminReadiness(isReady: readiness.isReady, detail: readiness.detail)
    }
    let port = try await gateway.start()
    logger.notice(
        "listening",
        [
            "address": "\(settings.listen.host):\(port)", "tls": settings.tls == nil ? "off" : "on",
            "internal_auth": settings.internalAuth.rawValue,
            "max_concurrent_requests": String(settings.admission.concurrentRequestsMax),
            "notification_rate_limit":
                "\(settings.admission.notificationRule.ratePerSecond)/s burst \(settings.admission.notificationRule.burst)",
        ])
    if settings.internalAuth == .off {
        logger.warning(
            "INTERNAL_AUTH=off: calling the services without a certificate; loopback only, never in production")
    }
    // Unbuffered, so a parent process reading our stdout sees it at once.
    FileHandle.standardOutput.write(Data("Gateway listening on \(settings.listen.host):\(port)\n".utf8))

    let signal = await termination.wait()
    logger.notice("shutting down", ["signal": signal])
    await gateway.shutdown(gracePeriod: settings.shutdownGrace)
    await admin?.shutdown()
    logger.notice("stopped")
} catch {
    logger.critical("start-up failed", ["error": "\(error)"])
    exit(1)
}
