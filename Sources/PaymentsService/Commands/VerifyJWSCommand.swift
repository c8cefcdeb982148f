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
        OptionSpec(flag: "--root", env: nil, default: AppleVerificationSettings.defaultRootPath,
                   help: "Trusted root certificate(s), comma-separated paths (DER or PEM)."),
        OptionSpec(flag: "--bundle-id", env: nil, help: "Expected bundle id."),
        OptionSpec(flag: "--environment", env: nil, default: "Production",
                   help: "Expected environment: Production, Sandbox, Xcode or LocalTesting."),
        OptionSpec(flag: "--app-apple-id", env: nil, help: "Expected appAppleId (required for Production)."),
        OptionSpec(flag: "--kind", env: nil, default: "transaction",
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
            print(options.helpText(program: "PaymentsService verify-jws", summary: "verify one Apple JWS read from standard input"))
            return 0
        }
        let kind: SignedDataVerifier.PayloadKind
        switch options.value("--kind") ?? "" {
        case "transaction": kind = .transaction
        case "notification": kind = .notification
        case "renewal": kind = .renewalInfo
        case "app-transaction": kind = .appTransaction
        case let other:
            printError("unknown --kind \(other)")
            return 2
        }
        let verifier: SignedDataVerifier
        do {
            let environment = options.value("--environment") ?? "Production"
            let isLocal = environment == "Xcode" || environment == "LocalTesting"
            let configuration = try AppleVerificationSettings.verifierConfiguration(
                bundleId: try options.required("--bundle-id"),
                appAppleId: options.value("--app-apple-id"),
                environments: environment,
                rootPaths: options.value("--root") ?? AppleVerificationSettings.defaultRootPath,
                onlineChecks: "0",
                localTesting: isLocal ? "1" : "0")
            verifier = try SignedDataVerifier(configuration: configuration)
        } catch {
            printError("\(error)")
            return 2
        }
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
            let json = try verifier.verifyAndDecodeJSON(text.trimmingCharacters(in: .whitespacesAndNewlines), kind: kind)
            print(json)
            return 0
        } catch {
            printFailure(error)
            return 1
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
