import FieldRules
import Foundation
import ServiceKit

/// The parts of `main` worth testing: the mint-token subcommand and
/// process set-up.
public enum GatewayCommandLine {
    /// `mint-token`: an HS256 token for --sub/--email/--ttl, signed with
    /// JWT_HS256_SECRET for JWT_ISSUER and JWT_AUDIENCE (read from
    /// `environment`). Every problem is reported at once, as sentences
    /// naming the setting, never a value.
    public static func mintToken(options: CommandLineOptions, environment: [String: String], nowSeconds: Int64)
        throws(SettingsError) -> String
    {
        var settings = SettingsCollector(options)
        func variable(_ name: String, because reason: String) -> String? {
            guard let value = environment[name], !value.isEmpty else {
                settings.report(.missing(name, because: reason))
                return nil
            }
            return value
        }
        let secret = variable(
            "JWT_HS256_SECRET", because: "the development token is signed with it (HS256), as the gateway verifies it")
        if let secret, secret.utf8.count < GatewayLimits.hmacSecretBytesMin {
            settings.report(
                SettingProblem(
                    "JWT_HS256_SECRET", "must be at least \(GatewayLimits.hmacSecretBytesMin) bytes",
                    because: "RFC 7518 section 3.2 requires an HS256 key at least as long as its hash"))
        }
        let issuer = variable("JWT_ISSUER", because: "the token's iss must be the issuer the gateway accepts")
        let audience = variable("JWT_AUDIENCE", because: "the token's aud must be the audience the gateway accepts")
        var subject: String?
        if let text = settings.required("--sub", because: "it is the user id (sub) the token authenticates") {
            subject = try? UUIDRule.canonical(text)
            if subject == nil {
                settings.report(
                    SettingProblem("--sub", "must be a UUID", because: "the gateway accepts only UUID user ids"))
            }
        }
        let email = settings.required(
            "--email", because: "the gateway keys starter-pack eligibility by the token's email claim")
        let lifetime = settings.integer(
            "--ttl", in: 1...31_536_000, unit: "of seconds", because: "it is how long the token is valid")
        try settings.finish()
        guard let secret, let issuer, let audience, let subject, let email, let lifetime else {
            preconditionFailure("an unread setting is a reported problem")
        }
        do {
            let minter = try DevTokenMinter(secret: Array(secret.utf8), issuer: issuer, audience: audience)
            return minter.mint(userId: subject, email: email, issuedAtSeconds: nowSeconds, lifetimeSeconds: lifetime)
        } catch {
            throw SettingsError([
                SettingProblem(
                    "JWT_HS256_SECRET", "must be a usable HS256 key (\(error))", because: "the token is signed with it")
            ])
        }
    }

    /// Raises the soft open-file limit to the hard one: 10,000 connections
    /// need more descriptors than the usual soft limit of 1024.
    public static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
