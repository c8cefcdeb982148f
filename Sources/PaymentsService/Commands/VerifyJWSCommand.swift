import AppStoreVerification
import Foundation
import ServiceKit
import StrictJSON

/// `PaymentsService verify-jws`: reads one JWS on standard input, verifies it
/// offline exactly as the service would, and prints the decoded payload as
/// JSON (exit 0) or a typed failure as JSON (exit 1). For support staff
/// checking a disputed purchase; usage errors exit 2.
enum VerifyJWSCommand {
    static let optionSpecs: [OptionSpec] = [
        OptionSpec(
            flag: "--root", env: nil, default: AppleVerificationSettings.defaultRootPath,
            help: "Trusted root certificate(s), comma-separated paths (DER or PEM)."),
        OptionSpec(flag: "--bundle-id", env: nil, help: "Expected bundle id."),
        OptionSpec(
            flag: "--environment", env: nil, default: "Production",
            help: "Expected environment: Production, Sandbox, Xcode or LocalTesting."),
        OptionSpec(flag: "--app-apple-id", env: nil, help: "Expected appAppleId (required for Production)."),
        OptionSpec(
            flag: "--kind", env: nil, default: "transaction",
            help: "transaction | notification | renewal | app-transaction."),
    ]

    static func run(arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(specs: optionSpecs, arguments: arguments, environment: [:])
        } catch {
            printError("\(error)")
            return 2
        }
        if options.helpRequested {
            print(
                options.helpText(
                    program: "PaymentsService verify-jws", summary: "verify one Apple JWS read from standard input"))
            return 0
        }
        var settings = SettingsCollector(options)
        let read = readSettings(&settings)
        do {
            try settings.finish()
        } catch {
            FileHandle.standardError.write(Data(error.report(program: "verify-jws").utf8))
            return 2
        }
        guard let (kind, verifier) = read else { preconditionFailure("an unread setting is a reported problem") }
        let input = FileHandle.standardInput.readDataToEndOfFile()
        guard input.count <= VerificationLimits.jwsLengthBytesMax + 2 else {
            printFailure(.payloadTooLarge(lengthBytes: input.count))
            return 1
        }
        guard let text = String(data: input, encoding: .utf8) else {
            printFailure(.malformed(reason: "input is not UTF-8"))
            return 1
        }
        do {
            let json = try verifier.verifyAndDecodeJSON(
                text.trimmingCharacters(in: .whitespacesAndNewlines), kind: kind)
            print(json)
            return 0
        } catch {
            printFailure(error)
            return 1
        }
    }

    static let kinds: KeyValuePairs<String, SignedDataVerifier.PayloadKind> = [
        "transaction": .transaction, "notification": .notification, "renewal": .renewalInfo,
        "app-transaction": .appTransaction,
    ]

    /// The payload kind and the verifier the flags describe, every problem
    /// of every flag reported to `settings` (nothing is read from stdin
    /// before they are all fixed).
    static func readSettings(_ settings: inout SettingsCollector) -> (
        SignedDataVerifier.PayloadKind, SignedDataVerifier
    )? {
        let kind = settings.choice("--kind", kinds, because: "each kind of signed data has its own payload and checks")
        let bundleId = settings.required("--bundle-id", because: AppleVerificationSettings.bundleIdReason)
        let environmentReason = "data signed for any other App Store environment is refused"
        let environment = settings.choice(
            "--environment",
            [
                "production": AppStoreEnvironment.production, "sandbox": .sandbox, "xcode": .xcode,
                "localtesting": .localTesting,
            ], because: environmentReason)
        var appAppleId: Int64?
        let appReason = "Apple signs the app's numeric id into production data"
        if let text = settings.value("--app-apple-id") {
            if let parsed = Int64(text), parsed > 0 {
                appAppleId = parsed
            } else {
                settings.report(
                    SettingProblem(
                        "--app-apple-id", "must be a positive whole number (the app's App Store id)", because: appReason
                    ))
            }
        } else if environment == .production {
            settings.report(
                SettingProblem("--app-apple-id", "must be set when --environment is Production", because: appReason))
        }
        let rootsText = settings.value("--root") ?? AppleVerificationSettings.defaultRootPath
        let paths = rootsText.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        var roots: [Data]?
        do throws(ConfigurationError) {
            roots = try VerifierConfiguration.loadRoots(paths: paths)
            if roots?.isEmpty != false { throw ConfigurationError.noTrustedRoots }
        } catch {
            roots = nil
            settings.report(
                SettingProblem(
                    "--root", "must name readable root certificates, DER or PEM (\(error))",
                    because: "the signed data must chain to one of them"))
        }
        guard let kind, let bundleId, let environment, let roots, settings.problems.isEmpty else { return nil }
        let configuration = VerifierConfiguration(
            bundleId: bundleId, appAppleId: appAppleId, allowedEnvironments: [environment],
            localTestingMode: environment.isLocal,
            onlineChecks: false, trustedRoots: roots)
        do {
            return (kind, try SignedDataVerifier(configuration: configuration))
        } catch {
            settings.report(
                SettingProblem(
                    "--root", "must be usable (\(error))", because: "the signed data must chain to one of them"))
            return nil
        }
    }

    private static func printFailure(_ failure: VerificationFailure) {
        // Keys in sorted order, as the tool has always printed them.
        let object = JSONObject([
            "detail": .string("\(failure)"),
            "failure": .string(failure.code),
            "retryable": .bool(failure.isRetryable),
            "valid": .bool(false),
        ])
        print(JSONWriter.string(of: .object(object)))
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data("verify-jws: \(message)\n".utf8))
    }
}
