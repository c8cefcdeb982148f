import Foundation
import XCTest

/// OpenSSL stays behind CryptoPrimitives (docs/ARCHITECTURE.md, "Crypto"):
/// only CryptoPrimitives, AppStoreVerification's X.509, OCSP and CMS files and
/// RPCRuntime's TLS layer may import COpenSSL, and only their targets may
/// list it in Package.swift. Everything else hashes, signs, verifies and
/// base64-decodes through CryptoPrimitives, so each primitive exists once.
final class COpenSSLBoundaryTests: XCTestCase {
    /// Folders (every Swift file below) and single files allowed to import COpenSSL.
    static let allowedFolders = ["Sources/CryptoPrimitives/", "Sources/RPCRuntime/TLS/"]
    static let allowedFiles: Set<String> = [
        "Sources/AppStoreVerification/Internal/X509Certificate.swift",
        "Sources/AppStoreVerification/Internal/TrustStore.swift",
        "Sources/AppStoreVerification/Internal/CertificateBuilder.swift",
        "Sources/AppStoreVerification/Internal/OCSPCheck.swift",
        "Sources/AppStoreVerification/Internal/OCSPResponder.swift",
        "Sources/AppStoreVerification/Internal/CMSSignedData.swift",
    ]
    /// Targets that may depend on COpenSSL.
    static let allowedTargets: Set<String> = ["CryptoPrimitives", "AppStoreVerification", "RPCRuntime"]
    /// The SwiftPM source trees (Fuzz/ harnesses are built by scripts/fuzz.sh
    /// and use OpenSSL as an independent oracle).
    static let scannedFolders = ["Sources", "Tests", "bench"]

    /// The package root: this file is Tests/CryptoPrimitivesTests/<name>.swift.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testOnlyTheAllowedFilesImportCOpenSSL() throws {
        let importers = try Self.swiftFiles().filter { try Self.importsCOpenSSL(path: $0) }
        XCTAssertFalse(importers.isEmpty, "the scan found no importer at all: is the package root right?")
        let offending = importers.filter { path in
            !Self.allowedFiles.contains(path) && !Self.allowedFolders.contains { path.hasPrefix($0) }
        }
        XCTAssertEqual(offending, [], "these files import COpenSSL; use CryptoPrimitives instead")
    }

    func testOnlyTheAllowedTargetsDependOnCOpenSSL() throws {
        let manifest = try String(contentsOf: Self.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let dependents = Self.targetsDependingOnCOpenSSL(manifest: manifest)
        XCTAssertTrue(dependents.contains("CryptoPrimitives"), "the manifest scan found no COpenSSL dependency at all")
        XCTAssertEqual(
            dependents.subtracting(Self.allowedTargets), [],
            "these targets list COpenSSL; give them CryptoPrimitives instead")
    }

    /// The scan itself must catch what it is for.
    func testTheScansCatchViolations() {
        let manifest = """
            .target(name: "CryptoPrimitives", dependencies: ["COpenSSL"]),
            // A comment naming "COpenSSL" is not a dependency.
            .executableTarget(
                name: "Gateway",
                dependencies: ["ServiceKit", "COpenSSL"]
            ),
            .testTarget(name: "GatewayTests", dependencies: ["Gateway"]),
            """
        XCTAssertEqual(Self.targetsDependingOnCOpenSSL(manifest: manifest), ["CryptoPrimitives", "Gateway"])
        XCTAssertTrue(Self.importsCOpenSSL(text: "import Foundation\n@preconcurrency import COpenSSL\n"))
        XCTAssertTrue(Self.importsCOpenSSL(text: "  import COpenSSL // shim\n"))
        XCTAssertTrue(Self.importsCOpenSSL(text: "@_implementationOnly import COpenSSL\n"))
        XCTAssertFalse(Self.importsCOpenSSL(text: "import CryptoPrimitives\n// import COpenSSL\n"))
        XCTAssertFalse(Self.importsCOpenSSL(text: "import COpenSSLExtras\n"))
    }

    // MARK: Scanning.

    /// Every .swift file under the scanned folders, relative to the root, sorted.
    static func swiftFiles() throws -> [String] {
        var paths: [String] = []
        for folder in scannedFolders {
            let url = packageRoot.appendingPathComponent(folder)
            guard let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let file as URL in enumerator where file.pathExtension == "swift" {
                paths.append(folder + "/" + file.path.dropFirst(url.path.count + 1))
            }
        }
        return paths.sorted()
    }

    static func importsCOpenSSL(path: String) throws -> Bool {
        importsCOpenSSL(text: try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8))
    }

    /// Whether a line is an import of COpenSSL (with any attributes or kind).
    static func importsCOpenSSL(text: String) -> Bool {
        text.split(whereSeparator: \.isNewline).contains { line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = code.split(whereSeparator: \.isWhitespace)
            guard let importIndex = words.firstIndex(of: "import"),
                words[..<importIndex].allSatisfy({ $0.hasPrefix("@") })
            else {
                return false
            }
            return words.last == "COpenSSL" || words.last?.hasPrefix("COpenSSL.") == true
        }
    }

    /// Names of the targets whose declaration lists "COpenSSL", comments
    /// ignored. Each `.target(`, `.executableTarget(` or `.testTarget(` runs
    /// until the next one.
    static func targetsDependingOnCOpenSSL(manifest: String) -> Set<String> {
        let code = manifest.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
            .joined(separator: "\n")
        var result: Set<String> = []
        let starts = [".target(", ".executableTarget(", ".testTarget("]
        var declarations: [Substring] = []
        var rest = code[...]
        while let start = starts.compactMap({ rest.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound }) {
            let afterStart = rest[start.upperBound...]
            let next = starts.compactMap { afterStart.range(of: $0)?.lowerBound }.min() ?? afterStart.endIndex
            declarations.append(rest[start.lowerBound..<next])
            rest = afterStart[next...]
        }
        for declaration in declarations where declaration.contains("\"COpenSSL\"") {
            guard let nameRange = declaration.range(of: "name: \""),
                let end = declaration[nameRange.upperBound...].firstIndex(of: "\"")
            else { continue }
            result.insert(String(declaration[nameRange.upperBound..<end]))
        }
        return result
    }
}
