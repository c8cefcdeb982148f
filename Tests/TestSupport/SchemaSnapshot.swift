import PostgresClient

/// What a migration that must rewrite nothing has to leave as it was, read
/// from the catalog for the session's schema (`current_schema()`): the file
/// of every table, index and TOAST table (`relfilenode`: a rewrite or an
/// index rebuild gives a new one), each index's definition, each column's
/// default; and, to show what changed, the column types and the rules.
public struct SchemaSnapshot: Equatable, Sendable {
    /// Relation name (a TOAST table as "TABLE (toast)") → relfilenode.
    public var files: [String: String]
    /// Index name → `pg_get_indexdef`.
    public var indexDefinitions: [String: String]
    /// "table.column" → the default's expression.
    public var columnDefaults: [String: String]

    public static func read(_ connection: PostgresConnection) async throws -> SchemaSnapshot {
        var files: [String: String] = [:]
        for row in try await connection.query(
            """
            select c.relname::text as name, c.relfilenode::text as file, t.relfilenode::text as toast_file
            from pg_class c left join pg_class t on t.oid = c.reltoastrelid
            where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'i')
            """)
        {
            files[try row.string("name")] = try row.string("file")
            if let toast = try row.optionalString("toast_file") { files[try row.string("name") + " (toast)"] = toast }
        }
        var indexDefinitions: [String: String] = [:]
        for row in try await connection.query(
            "select indexname::text as name, indexdef from pg_indexes where schemaname = current_schema()")
        {
            indexDefinitions[try row.string("name")] = try row.string("indexdef")
        }
        var columnDefaults: [String: String] = [:]
        for row in try await connection.query(
            """
            select c.relname || '.' || a.attname as name, pg_get_expr(d.adbin, d.adrelid) as expression
            from pg_attrdef d join pg_class c on c.oid = d.adrelid join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
            where c.relnamespace = current_schema()::regnamespace
            """)
        {
            columnDefaults[try row.string("name")] = try row.string("expression")
        }
        return SchemaSnapshot(files: files, indexDefinitions: indexDefinitions, columnDefaults: columnDefaults)
    }

    /// The names of `table`'s CHECK constraints, sorted.
    public static func tableChecks(_ table: String, _ connection: PostgresConnection) async throws -> [String] {
        try await connection.query(
            """
            select conname::text as name from pg_constraint
            where contype = 'c' and conrelid = (current_schema() || '.' || $1::text)::regclass order by 1
            """, [.text(table)]
        ).map { try $0.string("name") }
    }

    /// One CHECK constraint of a table: its name, its definition as
    /// `pg_get_constraintdef` prints it, and whether PostgreSQL has
    /// validated the stored rows against it.
    public struct TableCheck: Equatable, Sendable {
        public var name: String
        public var definition: String
        public var validated: Bool
    }

    /// `table`'s CHECK constraints with their definitions, sorted by name.
    public static func tableCheckDefinitions(_ table: String, _ connection: PostgresConnection) async throws
        -> [TableCheck]
    {
        try await connection.query(
            """
            select conname::text as name, pg_get_constraintdef(oid) as definition, convalidated from pg_constraint
            where contype = 'c' and conrelid = (current_schema() || '.' || $1::text)::regclass order by 1
            """, [.text(table)]
        ).map {
            TableCheck(
                name: try $0.string("name"), definition: try $0.string("definition"),
                validated: try $0.bool("convalidated"))
        }
    }

    /// Each domain of the schema with its CHECK constraints' names, as "domain: constraint, ...".
    public static func domainChecks(_ connection: PostgresConnection) async throws -> [String: [String]] {
        var checks: [String: [String]] = [:]
        for row in try await connection.query(
            """
            select t.typname::text as domain, c.conname::text as name
            from pg_type t left join pg_constraint c on c.contypid = t.oid
            where t.typtype = 'd' and t.typnamespace = current_schema()::regnamespace order by 1, 2
            """)
        {
            checks[try row.string("domain"), default: []] += try row.optionalString("name").map { [$0] } ?? []
        }
        return checks
    }

    /// `table`'s columns whose type is a domain → that domain.
    public static func columnDomains(_ table: String, _ connection: PostgresConnection) async throws -> [String: String]
    {
        var domains: [String: String] = [:]
        for row in try await connection.query(
            """
            select column_name::text as name, domain_name::text as domain from information_schema.columns
            where table_schema = current_schema() and table_name = $1::text and domain_name is not null
            """, [.text(table)])
        {
            domains[try row.string("name")] = try row.string("domain")
        }
        return domains
    }

    /// Every row of `table` as PostgreSQL's text form of the row, ordered by `key`.
    public static func rows(_ table: String, orderedBy key: String, _ connection: PostgresConnection) async throws
        -> [String]
    {
        try await connection.query("select t::text as row from \(table) t order by \(key)").map { try $0.string("row") }
    }
}
