import Foundation

/// The rows a statement returned, copied out of libpq into Swift values
/// (text format), plus the command tag ("INSERT 0 1", "COMMIT", ...).
public struct PostgresRows: Sendable, Sequence {
    public var columns: [String] { layout.names }
    public let commandTag: String
    /// Rows touched by INSERT/UPDATE/DELETE (0 when not applicable).
    public let affectedRowCount: Int
    let cells: [[String?]]
    /// The column names and positions (shared by a prepared statement's results).
    let layout: ColumnLayout

    init(layout: ColumnLayout, cells: [[String?]], commandTag: String, affectedRowCount: Int) {
        self.layout = layout
        self.cells = cells
        self.commandTag = commandTag
        self.affectedRowCount = affectedRowCount
    }

    public var count: Int { cells.count }
    public var isEmpty: Bool { cells.isEmpty }
    public var first: PostgresRow? { cells.isEmpty ? nil : self[0] }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(values: cells[position], columnIndex: layout.positions)
    }

    public func makeIterator() -> AnyIterator<PostgresRow> {
        var position = 0
        return AnyIterator {
            guard position < cells.count else { return nil }
            defer { position += 1 }
            return self[position]
        }
    }
}
