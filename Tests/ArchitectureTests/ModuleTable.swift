import Foundation

/// The module table of docs/ARCHITECTURE.md ("## Modules"), read as data:
/// each row's modules and what they may depend on. The test reads the
/// document itself, so the table and the check cannot drift apart.
struct ModuleTable: Equatable {
    /// One row: several modules may share a row and its allowed list.
    struct Row: Equatable {
        var modules: [String]
        var allowedDependencies: Set<String>
    }

    /// Why the document could not be read as a module table.
    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    var rows: [Row]

    /// The header the table must have; the third column is the one checked.
    static let header = "| module | what it is | may depend on | C it touches |"

    /// Reads the first table under `header` in `markdown`. A module cell
    /// names modules in backticks; a "may depend on" cell is "—" or a comma
    /// separated list of backticked names and nothing else, so prose there
    /// cannot quietly allow (or hide) a dependency.
    init(markdown: String) throws {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let headerIndex = lines.firstIndex(of: Self.header) else {
            throw ParseError(description: "no line \(Self.header)")
        }
        var rows: [Row] = []
        for line in lines[(headerIndex + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = Self.cells(of: line)
            guard cells.count == 4 else { throw ParseError(description: "not 4 cells: \(line)") }
            let modules = Self.backticked(cells[0])
            guard !modules.isEmpty else { throw ParseError(description: "no module in: \(line)") }
            rows.append(Row(modules: modules, allowedDependencies: try Self.allowed(cells[2], line: line)))
        }
        guard !rows.isEmpty else { throw ParseError(description: "the table has no rows") }
        self.rows = rows
    }

    init(rows: [Row]) { self.rows = rows }

    /// The row that lists `module`, if any.
    func row(of module: String) -> Row? { rows.first { $0.modules.contains(module) } }

    private static func cells(of line: String) -> [String] {
        var inner = Substring(line.trimmingCharacters(in: .whitespaces))
        inner = inner.dropFirst()
        if inner.hasSuffix("|") { inner = inner.dropLast() }
        return inner.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
    }

    private static func backticked(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().compactMap { index, part in
            index % 2 == 1 ? String(part) : nil
        }
    }

    private static func allowed(_ cell: String, line: String) throws -> Set<String> {
        if cell == "—" { return [] }
        var names: Set<String> = []
        for item in cell.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard item.count > 2, item.hasPrefix("`"), item.hasSuffix("`"),
                item.dropFirst().dropLast().allSatisfy({ $0 != "`" && $0 != " " })
            else {
                throw ParseError(description: "\"may depend on\" must be — or `A`, `B`: \(line)")
            }
            names.insert(String(item.dropFirst().dropLast()))
        }
        return names
    }
}
