import Foundation

/// One target of Package.swift as SwiftPM sees it (`swift package
/// dump-package`), reduced to what the module graph check needs.
struct PackageTarget: Equatable {
    var name: String
    var isTest: Bool
    var dependencies: [String]
    /// The target's folder relative to the package root (SwiftPM's default
    /// when Package.swift gives no `path`); nil for system libraries.
    var path: String?

    /// Why the manifest could not be read.
    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    /// The package's targets, from `swift package dump-package` run on
    /// `packageRoot` with a scratch folder of its own (the suite's `.build`
    /// is locked by the running `swift test`, and is not ours to touch).
    static func load(packageRoot: URL) throws -> [PackageTarget] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("module-graph-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "swift", "package", "--package-path", packageRoot.path, "--scratch-path", scratch.path, "dump-package",
        ]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read before waiting: the JSON is larger than a pipe's buffer.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReadError(
                description: "swift package dump-package failed (\(process.terminationStatus)): \(errorText)")
        }
        return try parse(dumpPackageJSON: data)
    }

    /// Reads dump-package's JSON: `targets[].name`, `.type` and
    /// `.dependencies[]`, each dependency an object with one key (`byName`,
    /// `target` or `product`) whose array starts with the name.
    static func parse(dumpPackageJSON data: Data) throws -> [PackageTarget] {
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let targets = root["targets"] as? [[String: Any]]
        else {
            throw ReadError(description: "no targets in dump-package's JSON")
        }
        return try targets.map { target in
            guard let name = target["name"] as? String, let type = target["type"] as? String,
                let dependencies = target["dependencies"] as? [[String: Any]]
            else {
                throw ReadError(description: "a target without name, type or dependencies: \(target)")
            }
            let names = try dependencies.map { dependency in
                guard dependency.count == 1, let fields = dependency.values.first as? [Any],
                    let name = fields.first as? String
                else {
                    throw ReadError(description: "unreadable dependency of \(name): \(dependency)")
                }
                return name
            }
            let path =
                target["path"] as? String
                ?? (type == "system" ? nil : (type == "test" ? "Tests/" : "Sources/") + name)
            return PackageTarget(name: name, isTest: type == "test", dependencies: names, path: path)
        }
    }
}
