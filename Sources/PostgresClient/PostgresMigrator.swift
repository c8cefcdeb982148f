/// Applies versioned migrations in order inside one transaction, recording
/// them in `schema_migrations(version, name, checksum, applied_at)`.
/// Safe to run twice (applied versions are skipped) and from two instances at
/// once (a transaction-scoped advisory lock serialises runners).
public struct PostgresMigrator: Sendable {
    public let migrations: [PostgresMigration]
    /// The pg_advisory_xact_lock key; one per database is enough.
    public let advisoryLockKey: Int64

    public init(migrations: [PostgresMigration], advisoryLockKey: Int64 = 7_370_294_017_554_219) {
        let versions = migrations.map(\.version)
        precondition(
            versions == versions.sorted() && Set(versions).count == versions.count,
            "migration versions must be unique and ascending")
        self.migrations = migrations
        self.advisoryLockKey = advisoryLockKey
    }

    /// Applies what is missing; returns the versions applied by this call.
    /// Throws `migrationChecksumMismatch` when an applied migration's text changed.
    @discardableResult
    public func migrate(on pool: PostgresPool) async throws -> [Int] {
        try await pool.withTransaction { connection in
            try await connection.query("select pg_advisory_xact_lock($1::bigint)", [.int64(advisoryLockKey)])
            try await connection.execute(
                """
                create table if not exists schema_migrations (
                    version integer primary key,
                    name text not null,
                    checksum text not null,
                    applied_at timestamptz not null default now()
                )
                """)
            var appliedChecksums: [Int: String] = [:]
            for row in try await connection.query("select version, checksum from schema_migrations") {
                appliedChecksums[Int(try row.int64("version"))] = try row.string("checksum")
            }
            var appliedNow: [Int] = []
            for migration in migrations {
                let checksum = try await connection.query("select md5($1::text) as checksum", [.text(migration.sql)])
                    .first!.string("checksum")
                if let applied = appliedChecksums[migration.version] {
                    guard applied == checksum else {
                        throw PostgresError(
                            code: .migrationChecksumMismatch,
                            message: "migration \(migration.version) \(migration.name) changed after it was applied")
                    }
                    continue
                }
                try await connection.execute(migration.sql)
                try await connection.query(
                    "insert into schema_migrations (version, name, checksum) values ($1::integer, $2, $3)",
                    [.int64(Int64(migration.version)), .text(migration.name), .text(checksum)])
                appliedNow.append(migration.version)
            }
            return appliedNow
        }
    }
}
