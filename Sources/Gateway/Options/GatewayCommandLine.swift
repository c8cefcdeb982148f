import FieldRules
import Foundation
import ServiceKit

/// The parts of `main` worth testing: the mint-token subcommand and
/// process set-up.
public enum GatewayCommandLine {
    /// `mint-token`: an HS256 token for --sub/--email/--ttl, signed with
    /// JWT_HS256_SECRET for JWT_ISSUER and JWT_AUDIENCE.
    public static func mintToken(options: CommandLineOptions, environment: [String: String], nowSeconds: Int64) throws -> String {
        guard let secret = environment["JWT_HS256_SECRET"], !secret.isEmpty else {
            throw JWTConfigurationError.missingVariable("JWT_HS256_SECRET")
        }
        guard let issuer = environment["JWT_ISSUER"], !issuer.isEmpty else { throw JWTConfigurationError.missingVariable("JWT_ISSUER") }
        guard let audience = environment["JWT_AUDIENCE"], !audience.isEmpty else {
            throw JWTConfigurationError.missingVariable("JWT_AUDIENCE")
        }
        guard let subject = try? UUIDRule.canonical(try options.required("--sub")) else {
            throw CommandLineError("--sub must be a UUID")
        }
        let email = try options.required("--email")
        guard let lifetime = Int64(try options.required("--ttl")), lifetime > 0 else {
            throw CommandLineError("--ttl must be a positive number of seconds")
        }
        let minter = try DevTokenMinter(secret: Array(secret.utf8), issuer: issuer, audience: audience)
        return minter.mint(userId: subject, email: email, issuedAtSeconds: nowSeconds, lifetimeSeconds: lifetime)
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
