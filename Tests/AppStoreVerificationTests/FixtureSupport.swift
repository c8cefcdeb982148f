import Foundation
import XCTest
@testable import AppStoreVerification

/// Locates fixtures and the repository's config/ relative to this file.
enum FixtureSupport {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let repositoryRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()

    static func fixtureData(_ name: String) throws -> Data {
        try Data(contentsOf: testsDirectory.appendingPathComponent("Fixtures").appendingPathComponent(name))
    }

    static func fixtureText(_ name: String) throws -> String {
        String(decoding: try fixtureData(name), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func appleRootDER() throws -> Data {
        try Data(contentsOf: repositoryRoot.appendingPathComponent("config/AppleRootCA-G3.cer"))
    }
}

/// Asserts that `body` throws exactly `expected`.
func assertFailure<T>(
    _ expected: VerificationFailure, file: StaticString = #filePath, line: UInt = #line,
    _ body: () throws(VerificationFailure) -> T
) {
    do {
        let value = try body()
        XCTFail("expected \(expected), got success \(value)", file: file, line: line)
    } catch {
        XCTAssertEqual(error, expected, file: file, line: line)
    }
}

/// Asserts that `body` throws a failure with `code`.
func assertFailureCode<T>(
    _ code: String, file: StaticString = #filePath, line: UInt = #line,
    _ body: () throws(VerificationFailure) -> T
) {
    do {
        let value = try body()
        XCTFail("expected \(code), got success \(value)", file: file, line: line)
    } catch {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
    }
}
