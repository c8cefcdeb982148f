import RPCRuntime
import ServiceKit
import XCTest

final class CommandLineOptionsTests: XCTestCase {
    let specs = [
        OptionSpec(flag: "--listen", env: "LISTEN_ADDR", default: "127.0.0.1:50052", help: "Address to listen on."),
        OptionSpec(flag: nil, env: "DATABASE_URL", help: "libpq connection string."),
        OptionSpec(flag: nil, env: "EMAIL_HASH_SECRET", help: "HMAC key.", isSecret: true),
    ]

    func testDefaultsEnvironmentAndFlagsInOrderOfPrecedence() throws {
        var options = try CommandLineOptions(specs: specs, arguments: [], environment: [:])
        XCTAssertEqual(options.value("--listen"), "127.0.0.1:50052")
        options = try CommandLineOptions(specs: specs, arguments: [], environment: ["LISTEN_ADDR": "0.0.0.0:1"])
        XCTAssertEqual(options.value("--listen"), "0.0.0.0:1")
        options = try CommandLineOptions(
            specs: specs, arguments: ["--listen", "127.0.0.1:9"], environment: ["LISTEN_ADDR": "0.0.0.0:1"])
        XCTAssertEqual(options.value("--listen"), "127.0.0.1:9")
        options = try CommandLineOptions(
            specs: specs, arguments: ["--listen=127.0.0.1:8", "migrate"], environment: [:])
        XCTAssertEqual(options.value("--listen"), "127.0.0.1:8")
        XCTAssertEqual(options.positional, ["migrate"])
        XCTAssertEqual(
            try CommandLineOptions(specs: specs, arguments: [], environment: ["DATABASE_URL": "x"]).required(
                "DATABASE_URL"), "x")
    }

    func testUnknownFlagMissingValueAndMissingRequiredAreErrors() throws {
        XCTAssertThrowsError(try CommandLineOptions(specs: specs, arguments: ["--nope", "1"], environment: [:]))
        XCTAssertThrowsError(try CommandLineOptions(specs: specs, arguments: ["--listen"], environment: [:]))
        let options = try CommandLineOptions(specs: specs, arguments: [], environment: [:])
        XCTAssertThrowsError(try options.required("DATABASE_URL")) { error in
            XCTAssertTrue("\(error)".contains("DATABASE_URL"))
        }
    }

    func testHelpListsEveryFlagAndVariableButNoSecretValue() throws {
        let options = try CommandLineOptions(
            specs: specs, arguments: ["--help"], environment: ["EMAIL_HASH_SECRET": "hunter2"])
        XCTAssertTrue(options.helpRequested)
        let help = options.helpText(program: "PointsService", summary: "points")
        for word in ["--listen", "LISTEN_ADDR", "DATABASE_URL", "EMAIL_HASH_SECRET", "--help"] {
            XCTAssertTrue(help.contains(word), word)
        }
        XCTAssertFalse(help.contains("hunter2"))
    }

    func testAddressesParse() throws {
        XCTAssertEqual(try HostAndPort(parsing: "127.0.0.1:50051"), HostAndPort(host: "127.0.0.1", port: 50051))
        XCTAssertEqual(try HostAndPort(parsing: "[::1]:80"), HostAndPort(host: "::1", port: 80))
        XCTAssertEqual(
            try HostAndPort.parseList("a:1, b:2"), [HostAndPort(host: "a", port: 1), HostAndPort(host: "b", port: 2)])
        for bad in ["", "a", "a:", ":1", "a:70000", "a:-1", "[::1]80", "a:x"] {
            XCTAssertThrowsError(try HostAndPort(parsing: bad), bad)
        }
        XCTAssertThrowsError(try HostAndPort.parseList(" , "))
    }
}
