import Foundation
import TestSupport
import XCTest

/// Processes without a database do not link libpq: `ServiceKit` keeps
/// `PostgresClient` out, and only `ServiceKitDatabase` brings it in
/// (docs/ARCHITECTURE.md, the module table). Read from the built
/// executables with `ldd`, so a dependency that sneaks libpq back in fails.
final class LinkedLibraryTests: XCTestCase {
    func testGatewayAndEchoServerDoNotLinkLibPQ() throws {
        for executable in ["Gateway", "EchoServer"] {
            let libraries = try Self.linkedLibraries(of: executable)
            XCTAssertTrue(libraries.contains { $0.hasPrefix("libnghttp2.") }, "\(executable): ldd said \(libraries)")
            XCTAssertFalse(libraries.contains { $0.hasPrefix("libpq.") }, "\(executable) links libpq: \(libraries)")
        }
    }

    /// The control: the check does see libpq where it belongs.
    func testServicesWithADatabaseLinkLibPQ() throws {
        for executable in ["PointsService", "PaymentsService"] {
            XCTAssertTrue(try Self.linkedLibraries(of: executable).contains { $0.hasPrefix("libpq.") }, executable)
        }
    }

    private struct NotBuilt: Error { var path: String }

    /// The sonames `ldd` lists for a built product ("libpq.so.5", ...).
    private static func linkedLibraries(of executable: String) throws -> [String] {
        let path = ServiceProcess.productsDirectory.appendingPathComponent(executable).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            // `swift build --build-tests` builds every product; a missing one is a failure.
            throw NotBuilt(path: path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ldd \(path)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.map { String($0.trimmingCharacters(in: .whitespaces)) }
        }
    }
}
