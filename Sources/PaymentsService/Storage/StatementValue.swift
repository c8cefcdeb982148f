/// How a statement over `apple_iap_transactions` names its n-th value: `$n`
/// when one row's values are bound to it, `v.pn` when the rows of many
/// callers ride one statement as a VALUES list (`BatchedRowValues`). The
/// statements are written once against this, so the single and the batched
/// forms cannot drift apart. Every use casts the value (`$n::bigint`), so
/// the VALUES list's untyped columns (text) read the same as bound
/// parameters.
enum StatementValue: Sendable {
    /// `$n`: a bound parameter.
    case parameter
    /// `v.pn`: column n of the VALUES list `v`.
    case valuesColumn

    subscript(_ n: Int) -> String {
        switch self {
        case .parameter: "$\(n)"
        case .valuesColumn: "v.p\(n)"
        }
    }
}

/// The VALUES list that carries several rows' values into one statement:
/// `(values ($1, ..., $w), ($w+1, ...)) as v(p1, ..., pw)`, the rows' values
/// bound in order. Its columns are untyped (text), and every use casts.
enum BatchedRowValues {
    static func list(rows: Int, width: Int) -> String {
        precondition(rows >= 1 && width >= 1)
        var sql = "(values "
        sql.reserveCapacity(rows * width * 6 + width * 5 + 32)
        for row in 0..<rows {
            sql += row == 0 ? "(" : ", ("
            for column in 1...width {
                if column > 1 { sql += ", " }
                sql += "$\(row * width + column)"
            }
            sql += ")"
        }
        sql += ") as v("
        for column in 1...width {
            if column > 1 { sql += ", " }
            sql += "p\(column)"
        }
        return sql + ")"
    }
}
