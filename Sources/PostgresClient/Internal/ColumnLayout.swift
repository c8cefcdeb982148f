import CLibPQ
import Foundation

/// The columns of a result: their names in order and each name's first
/// position. Built from a `PGresult` once per prepared statement and reused
/// for its later results while they name the same columns (compared byte
/// for byte with libpq's names, no String built), so a result of forty
/// columns does not build forty Strings and a dictionary each time.
struct ColumnLayout: Sendable {
    let names: [String]
    let positions: [String: Int]

    init(names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        positions.reserveCapacity(names.count)
        for (position, name) in names.enumerated() where positions[name] == nil { positions[name] = position }
        self.positions = positions
    }

    /// The layout of `result`: `reusing` when its columns are exactly those names.
    static func of(_ result: OpaquePointer, reusing known: ColumnLayout?) -> ColumnLayout {
        let count = Int(PQnfields(result))
        if let known, known.matches(result, count: count) { return known }
        return ColumnLayout(names: (0..<count).map { PQfname(result, Int32($0)).map { String(cString: $0) } ?? "" })
    }

    private func matches(_ result: OpaquePointer, count: Int) -> Bool {
        guard names.count == count else { return false }
        for (position, name) in names.enumerated() {
            guard let field = PQfname(result, Int32(position)) else { return false }
            let length = strlen(field)
            let same =
                name.utf8.withContiguousStorageIfAvailable { bytes in
                    bytes.count == length && (length == 0 || memcmp(bytes.baseAddress!, field, length) == 0)
                } ?? (name == String(cString: field))
            guard same else { return false }
        }
        return true
    }
}
