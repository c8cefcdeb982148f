// Demo: a whole StoreKit 2 purchase through the running gateway, as an app
// and Apple would drive it, printed step by step (scripts/run.sh runs it).
//   Demo init-ca --out DIR       create a local-testing "Apple" CA once
//                                (DIR/ca.pem with keys, DIR/root.pem to trust)
//   Demo run --gateway HOST:PORT --ca DIR [--jwt-secret S --issuer I --audience A]
// Exits non-zero when any step answers something unexpected.
import AppStoreVerification
import Foundation

let usage = """
    usage: Demo init-ca --out DIR
           Demo run --gateway HOST:PORT --ca DIR [--jwt-secret SECRET] [--issuer ISS] [--audience AUD]
                    [--bundle-id ID] [--app-apple-id N] [--environment Xcode|Sandbox|Production] [--product-code CODE]
    The secret, issuer, audience, bundle id and app id fall back to JWT_HS256_SECRET, JWT_ISSUER,
    JWT_AUDIENCE, APPLE_BUNDLE_ID and APPLE_APP_APPLE_ID.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("Demo: \(message)\n".utf8))
    exit(1)
}

do {
    let arguments = try DemoArguments(
        Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
    if arguments.helpRequested || arguments.subcommand == nil {
        print(usage)
        exit(arguments.helpRequested ? 0 : 2)
    }
    switch arguments.subcommand {
    case "init-ca":
        let directory = try arguments.required("--out")
        let written = try DemoCertificateStore(directory: directory).create()
        print(
            written
                ? "created local testing CA in \(directory) (trust \(directory)/root.pem)"
                : "local testing CA in \(directory) already exists")
    case "run":
        let gateway = try HostAndPortText(try arguments.required("--gateway"))
        let authority = try DemoCertificateStore(directory: try arguments.required("--ca")).load()
        let secret = try arguments.required("--jwt-secret", env: "JWT_HS256_SECRET")
        let minter = HS256TokenMinter(
            secret: Array(secret.utf8), issuer: try arguments.required("--issuer", env: "JWT_ISSUER"),
            audience: try arguments.required("--audience", env: "JWT_AUDIENCE"))
        var appAppleId: Int64?
        if let text = arguments.value("--app-apple-id", env: "APPLE_APP_APPLE_ID") {
            guard let parsed = Int64(text), parsed > 0 else {
                throw WalkthroughFailure(description: "--app-apple-id must be a positive integer")
            }
            appAppleId = parsed
        }
        try PurchaseWalkthrough(
            settings: .init(
                gatewayHost: gateway.host, gatewayPort: gateway.port, authority: authority, minter: minter,
                bundleId: arguments.value("--bundle-id", env: "APPLE_BUNDLE_ID", default: "com.meeyao.qianwen")!,
                appAppleId: appAppleId, environment: arguments.value("--environment", default: "Xcode")!,
                productCode: arguments.value("--product-code", default: "starter_pack")!)
        ).run()
    case let other?:
        fail("unknown subcommand \(other)\n\(usage)")
    case nil:
        fail(usage)
    }
} catch {
    fail("\(error)")
}
