import Foundation

/// The modules a folder's Swift files import, read as text: one `import`
/// per line, as this repository writes them (`import X`, `@testable import
/// X`, `import struct X.Y`). Enough to compare with Package.swift; not a
/// Swift parser.
enum SwiftImports {
    /// The modules imported by `source` (a file's text) that are in `modules`.
    static func imported(in source: String, among modules: Set<String>) -> Set<String> {
        var found: Set<String> = []
        for line in source.split(separator: "\n") {
            var words = line.split(separator: " ", omittingEmptySubsequences: true)[...]
            while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            words = words.dropFirst()
            if words.count >= 2,
                ["struct", "class", "enum", "protocol", "typealias", "func", "let", "var"].contains(words.first!)
            {
                words = words.dropFirst()
            }
            let module = String(words.first!.prefix { $0 != "." })
            if modules.contains(module) { found.insert(module) }
        }
        return found
    }

    /// The modules imported by every `.swift` file under `folder`; nil when
    /// it holds no Swift file (a C target).
    static func imported(under folder: URL, among modules: Set<String>) throws -> Set<String>? {
        guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
            return nil
        }
        var found: Set<String> = []
        var sawSwift = false
        for case let file as URL in files where file.pathExtension == "swift" {
            sawSwift = true
            found.formUnion(imported(in: try String(contentsOf: file, encoding: .utf8), among: modules))
        }
        return sawSwift ? found : nil
    }
}
