import RPCRuntime
import ServiceKit
import ServiceKitDatabase
import XCTest

/// The collector behind every service's start-up: every wrong or missing
/// setting is reported, once, as one sentence, in the order `--help` lists
/// the settings, whatever order the code reads them in.
final class SettingsCollectorTests: XCTestCase {
    private let specs = [
        StandardOptions.listen(default: "127.0.0.1:50052"), StandardOptions.databaseURL,
        StandardOptions.databaseMaxConnections,
        StandardOptions.logLevel, StandardOptions.pointsAddresses,
    ]

    private func collector(_ environment: [String: String], _ arguments: [String] = []) throws -> SettingsCollector {
        SettingsCollector(try CommandLineOptions(specs: specs, arguments: arguments, environment: environment))
    }

    /// Reads in an order unlike `--help`'s, as a service's code may.
    private func readAll(_ settings: inout SettingsCollector) {
        _ = settings.logLevel()
        _ = settings.addresses("POINTS_ADDR", because: "calls are balanced over them")
        _ = ServiceDatabase.Settings.read(&settings)
        _ = settings.address("--listen", because: "calls arrive there")
    }

    func testEveryProblemIsReportedInHelpOrder() throws {
        var settings = try collector([
            "LISTEN_ADDR": "nowhere", "DATABASE_MAX_CONNECTIONS": "0", "LOG_LEVEL": "loud", "POINTS_ADDR": "a:1,b",
        ])
        readAll(&settings)
        XCTAssertThrowsError(try settings.finish()) { error in
            guard let error = error as? SettingsError else { return XCTFail("\(error)") }
            XCTAssertEqual(
                error.problems.map(\.setting),
                ["LISTEN_ADDR", "DATABASE_URL", "DATABASE_MAX_CONNECTIONS", "LOG_LEVEL", "POINTS_ADDR"])
            XCTAssertEqual(
                error.sentences,
                [
                    "LISTEN_ADDR (--listen) must be HOST:PORT (or [IPv6]:PORT) with a port in 0...65535: calls arrive there",
                    "DATABASE_URL must be set: it is the libpq connection string of this service's own database",
                    "DATABASE_MAX_CONNECTIONS must be a whole number in 1...200: it bounds this process's connections, "
                        + "which PostgreSQL's max_connections caps for all instances",
                    "LOG_LEVEL (--log-level) must be one of debug, info, notice, warning, error: it is the least severe kind of log line written",
                    "POINTS_ADDR must be a comma-separated list of HOST:PORT: calls are balanced over them",
                ])
        }
    }

    func testTheOrderDoesNotDependOnTheReadingOrder() throws {
        var forwards = try collector(["LOG_LEVEL": "loud", "DATABASE_MAX_CONNECTIONS": "x"])
        _ = ServiceDatabase.Settings.read(&forwards)
        _ = forwards.logLevel()
        var backwards = try collector(["LOG_LEVEL": "loud", "DATABASE_MAX_CONNECTIONS": "x"])
        _ = backwards.logLevel()
        _ = ServiceDatabase.Settings.read(&backwards)
        XCTAssertEqual(forwards.ordered, backwards.ordered)
        XCTAssertEqual(forwards.ordered.map(\.setting), ["DATABASE_URL", "DATABASE_MAX_CONNECTIONS", "LOG_LEVEL"])
    }

    func testAFlagIsNamedWithItsVariableAndTheSameProblemIsReportedOnce() throws {
        var settings = try collector(["DATABASE_URL": "postgresql:///x"], ["--listen", "nowhere"])
        _ = settings.address("--listen", because: "calls arrive there")
        _ = settings.address("LISTEN_ADDR", because: "calls arrive there")
        XCTAssertEqual(settings.problems.count, 1)
        XCTAssertEqual(settings.problems.first?.flag, "--listen")
        XCTAssertTrue(
            settings.problems.first?.description.hasPrefix("LISTEN_ADDR (--listen) must be HOST:PORT") ?? false)
    }

    func testGoodSettingsFinishWithoutProblems() throws {
        var settings = try collector(["DATABASE_URL": "postgresql:///points", "POINTS_ADDR": "a:1, [::1]:2"])
        readAll(&settings)
        XCTAssertNoThrow(try settings.finish())
        XCTAssertEqual(settings.addresses("POINTS_ADDR", because: "x")?.map(\.description), ["a:1", "[::1]:2"])
        XCTAssertEqual(settings.integer("DATABASE_MAX_CONNECTIONS", in: 1...200, because: "x"), 16)
    }

    func testTheReportIsOneLinePerProblemNamingTheProgram() {
        let error = SettingsError([
            SettingProblem(
                "EMAIL_HASH_SECRET", "must be at least 32 bytes",
                because: "it keys the email hash that links starter-pack claims"),
            .missing("DATABASE_URL", because: "it names the database"),
        ])
        XCTAssertEqual(
            error.report(program: "Gateway"),
            "Gateway: EMAIL_HASH_SECRET must be at least 32 bytes: it keys the email hash that links starter-pack claims\n"
                + "Gateway: DATABASE_URL must be set: it names the database\n")
    }

    func testTheInternalAuthSettingsReportEveryMissingFileAtOnce() throws {
        let options = try CommandLineOptions(
            specs: [
                StandardOptions.internalAuth, StandardOptions.tlsCertificate, StandardOptions.tlsKey,
                StandardOptions.tlsClientCA,
            ],
            arguments: [], environment: [:])
        var settings = SettingsCollector(options)
        XCTAssertNil(InternalAuth.serverTLS(&settings, listen: HostAndPort(host: "0.0.0.0", port: 1)))
        XCTAssertEqual(settings.ordered.map(\.setting), ["TLS_CERT", "TLS_KEY", "TLS_CLIENT_CA"])
    }
}
