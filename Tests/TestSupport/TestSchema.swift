import Foundation
import PostgresClient

/// A schema of its own in a test database: for a test that migrates a
/// schema only part of the way (a later migration's tests over rows written
/// under the earlier schema) without touching the shared one.
public enum TestSchema {
    /// Creates `<prefix>_<random>` in `url`'s database and returns its name
    /// with the statement that drops it (cascade), for the test's teardown.
    public static func create(_ url: String, prefix: String) async throws -> (
        name: String, drop: @Sendable () async throws -> Void
    ) {
        let name = prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try await administer(url) { try await $0.execute("create schema \(name)") }
        return (name, { try await administer(url) { try await $0.execute("drop schema \(name) cascade") } })
    }

    /// Runs `body` on a connection of its own, closed afterwards.
    private static func administer(_ url: String, _ body: (PostgresConnection) async throws -> Void) async throws {
        let admin = PostgresPool(configuration: .init(connectionString: url, connectionsMax: 1))
        do {
            try await admin.withConnection(body)
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
    }
}
