import Foundation
import XCTest

/// Package.swift against the module table of docs/ARCHITECTURE.md: a new
/// dependency the table does not allow, a target without a row, or a row
/// that has gone stale fails here. The rules themselves are checked on
/// made-up graphs first, so a check that cannot fail would show.
final class ModuleGraphTests: XCTestCase {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Package.swift's targets, read once for the tests that need them.
    private static let packageTargets = Result { try PackageTarget.load(packageRoot: packageRoot) }

    func testPackageSwiftKeepsToTheModuleTable() throws {
        let markdown = try String(
            contentsOf: Self.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let table = try ModuleTable(markdown: markdown)
        let targets = try Self.packageTargets.get()
        XCTAssertTrue(
            targets.contains { $0.name == "RPCCore" } && targets.contains(where: \.isTest), "dump-package read wrongly")
        let violations = ModuleGraphCheck.violations(targets: targets, table: table)
        XCTAssertEqual(violations, [], "\n" + violations.joined(separator: "\n"))
    }

    /// Package.swift's dependency lists say what the code really imports:
    /// nothing reached only transitively, nothing declared and never used
    /// (a declared C library is linked whether or not it is used).
    func testEveryTargetDeclaresExactlyWhatItImports() throws {
        let targets = try Self.packageTargets.get()
        let names = Set(targets.map(\.name))
        var mismatches: [String] = []
        for target in targets {
            guard let path = target.path,
                let imports = try SwiftImports.imported(
                    under: Self.packageRoot.appendingPathComponent(path), among: names)
            else { continue }
            let declared = Set(target.dependencies)
            for module in imports.subtracting(declared).sorted() {
                mismatches.append("\(target.name) imports \(module) without declaring it")
            }
            for module in declared.subtracting(imports).sorted() {
                mismatches.append("\(target.name) declares \(module) and never imports it")
            }
        }
        XCTAssertEqual(mismatches, [], "\n" + mismatches.joined(separator: "\n"))
    }

    func testImportLinesAreRead() {
        let source = """
            import Foundation
            @testable import Alpha
            @preconcurrency import Beta
            import struct Gamma.Thing
            // import Delta
            let text = "import Epsilon"
            #if canImport(Zeta)
            import Zeta
            #endif
            """
        XCTAssertEqual(
            SwiftImports.imported(in: source, among: ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta"]),
            ["Alpha", "Beta", "Gamma", "Zeta"])
    }

    /// The boundaries this table exists for, stated once more in code.
    func testTheDocumentedBoundaries() throws {
        let markdown = try String(
            contentsOf: Self.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let table = try ModuleTable(markdown: markdown)
        XCTAssertEqual(table.row(of: "RPCCore")?.allowedDependencies, [])
        XCTAssertEqual(table.row(of: "Contracts")?.allowedDependencies, ["CContracts", "CProtobufC", "RPCCore"])
        let serviceKit = try XCTUnwrap(table.row(of: "ServiceKit")).allowedDependencies
        XCTAssertTrue(serviceKit.isDisjoint(with: ["PostgresClient", "Contracts", "CLibPQ"]), "\(serviceKit)")
        let gateway = try XCTUnwrap(table.row(of: "Gateway")).allowedDependencies
        XCTAssertTrue(gateway.isDisjoint(with: ["PostgresClient", "ServiceKitDatabase", "CNGHTTP2"]), "\(gateway)")
    }

    func testADependencyTheTableDoesNotAllowIsReported() {
        let table = ModuleTable(rows: [
            .init(modules: ["Core"], allowedDependencies: []),
            .init(modules: ["App"], allowedDependencies: ["Core"]),
        ])
        let targets = [
            PackageTarget(name: "Core", isTest: false, dependencies: ["App"]),
            PackageTarget(name: "App", isTest: false, dependencies: ["Core"]),
        ]
        XCTAssertEqual(
            ModuleGraphCheck.violations(targets: targets, table: table),
            ["Core depends on App, which the module table does not allow"])
    }

    func testMissingRowsStaleRowsAndUnusedPermissionsAreReported() {
        let table = ModuleTable(rows: [
            .init(modules: ["Core", "Gone"], allowedDependencies: ["Extra"]),
            .init(modules: ["Core"], allowedDependencies: []),
        ])
        let targets = [
            PackageTarget(name: "Core", isTest: false, dependencies: []),
            PackageTarget(name: "New", isTest: false, dependencies: []),
            PackageTarget(name: "NewTests", isTest: true, dependencies: ["New", "Anything"]),
        ]
        XCTAssertEqual(
            ModuleGraphCheck.violations(targets: targets, table: table),
            [
                "New: in Package.swift but not in the module table",
                "Gone: in the module table but not a target of Package.swift",
                "Core, Gone: allowed Extra, which none of them depends on",
                "Core: in more than one row of the module table",
            ])
    }

    func testTheTableIsReadStrictly() throws {
        let header = ModuleTable.header + "\n|---|---|---|---|\n"
        let table = try ModuleTable(
            markdown: "intro\n\n" + header
                + "| `A`, `B` | two | `C`, `D` | — |\n| `C` | one | — | libc |\n\nafter | x |\n")
        XCTAssertEqual(
            table.rows,
            [
                .init(modules: ["A", "B"], allowedDependencies: ["C", "D"]),
                .init(modules: ["C"], allowedDependencies: []),
            ])
        // Prose in the checked column would allow or hide something unseen.
        XCTAssertThrowsError(try ModuleTable(markdown: header + "| `A` | x | `C` (not `D`) | — |\n"))
        XCTAssertThrowsError(try ModuleTable(markdown: header + "| `A` | x | nothing | — |\n"))
        XCTAssertThrowsError(try ModuleTable(markdown: header + "| `A` | x | `C` |\n"))
        XCTAssertThrowsError(try ModuleTable(markdown: "| module | what it is |\n"))
    }

    func testDumpPackageDependenciesOfEveryKindAreRead() throws {
        let json = #"""
            {"targets": [
              {"name": "A", "type": "regular", "dependencies": [{"byName": ["B", null]}, {"target": ["C", null]}, {"product": ["D", "pkg", null, null]}]},
              {"name": "ATests", "type": "test", "dependencies": []},
              {"name": "CLib", "type": "system", "dependencies": []}
            ]}
            """#
        XCTAssertEqual(
            try PackageTarget.parse(dumpPackageJSON: Data(json.utf8)),
            [
                PackageTarget(name: "A", isTest: false, dependencies: ["B", "C", "D"], path: "Sources/A"),
                PackageTarget(name: "ATests", isTest: true, dependencies: [], path: "Tests/ATests"),
                PackageTarget(name: "CLib", isTest: false, dependencies: [], path: nil),
            ])
    }
}
