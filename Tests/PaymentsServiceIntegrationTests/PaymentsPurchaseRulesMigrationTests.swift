import Foundation
@testable import PaymentsService
import PostgresClient
import TestSupport
import XCTest

/// Payments migration 9 (`purchase_rules_function`): the purchase row's
/// nine rules become one CHECK calling `apple_iap_transactions_rules`. Over
/// rows the store wrote under migration 8 nothing is rebuilt or rewritten and
/// the stored rows still pass; and over a grid of the columns the rules
/// read, the function refuses exactly what the nine CHECKs refused, naming
/// the same constraint (the first broken one by name, as PostgreSQL checks
/// them).
final class PaymentsPurchaseRulesMigrationTests: XCTestCase {
    /// The nine CHECKs on `apple_iap_transactions` before migration 9, as
    /// `pg_get_constraintdef` prints them (the first test checks that a
    /// database at version 8 holds exactly these), by name.
    static let nineRules: [(name: String, definition: String)] = [
        ("apple_iap_transactions_check2", "CHECK (((pending_action IS NULL) OR (next_attempt_at IS NOT NULL)))"),
        (
            "apple_iap_transactions_check3",
            "CHECK ((((status)::text <> 'granted'::text) OR (ledger_event_id IS NOT NULL)))"
        ),
        (
            "apple_iap_transactions_claimed_owner",
            "CHECK (((NOT claimed) OR ((user_id IS NOT NULL) AND (product_code IS NOT NULL))))"
        ),
        ("apple_iap_transactions_cycle_phase", "CHECK ((((clawback_cycle)::integer = 0) = (cycle_phase IS NULL)))"),
        (
            "apple_iap_transactions_environment_check",
            """
            CHECK (((environment)::text = ANY ((ARRAY['Sandbox'::character varying, 'Production'::character varying, \
            'Xcode'::character varying, 'LocalTesting'::character varying])::text[])))
            """
        ),
        ("apple_iap_transactions_grant_owed_claimed", "CHECK ((((grant_state)::text = 'not_owed'::text) OR claimed))"),
        (
            "apple_iap_transactions_grant_state_check",
            """
            CHECK (((grant_state)::text = ANY ((ARRAY['not_owed'::character varying, 'owed'::character varying, \
            'applied'::character varying, 'refused'::character varying])::text[])))
            """
        ),
        (
            "apple_iap_transactions_pending_action_check",
            """
            CHECK (((pending_action)::text = ANY ((ARRAY['grant'::character varying, 'clawback'::character varying, \
            'reverse_clawback'::character varying])::text[])))
            """
        ),
        (
            "apple_iap_transactions_status_check",
            """
            CHECK (((status)::text = ANY ((ARRAY['received'::character varying, 'verified'::character varying, \
            'granted'::character varying, 'failed'::character varying, 'refunded'::character varying, \
            'refunded_insufficient'::character varying, 'revoked'::character varying])::text[])))
            """
        ),
    ]

    func testMigrationNineOverStoredRowsRebuildsNothingAndLeavesOneRuleTheRowsPass() async throws {
        let store = try await PaymentsSchemaAtVersion.store(version: 8, for: self)
        let transactionIds = try await PaymentsRowsInEveryState.write(store)
        let before = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(before.checks.map(\.name), Self.nineRules.map(\.name))
        XCTAssertEqual(
            before.checks.map(\.definition), Self.nineRules.map(\.definition),
            "the rules this test compares the function with")

        try await PaymentsSchemaAtVersion.migrate(store.pool, upTo: 9)

        let after = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(
            after.schema.files, before.schema.files, "no table, index or TOAST table was rewritten or rebuilt")
        XCTAssertEqual(after.schema.indexDefinitions, before.schema.indexDefinitions)
        XCTAssertEqual(after.purchases, before.purchases, "every stored row reads as before")
        XCTAssertEqual(after.checks.map(\.name), ["apple_iap_transactions_rules"])
        XCTAssertEqual(
            after.checks.map(\.validated), [false], "added NOT VALID: nothing scanned under the table's lock")
        try await store.pool.withConnection { connection in
            // The stored rows pass the new rule too (what an operator's VALIDATE proves).
            try await connection.execute(
                "alter table apple_iap_transactions validate constraint apple_iap_transactions_rules")
        }
        let validated = try await store.pool.withConnection { try await Stored.read($0) }
        XCTAssertEqual(validated.checks.map(\.validated), [true])
        try await PaymentsRowsInEveryState.carryOn(store, refunded: transactionIds[2])
    }

    /// The grid runs in the database (9,216 rows, one round trip): each
    /// combination goes into a table carrying the nine CHECKs and through
    /// the function, and the constraint each names (GET STACKED
    /// DIAGNOSTICS, so the function's CONSTRAINT field is checked too) is
    /// compared.
    func testTheFunctionRefusesExactlyWhatTheNineChecksRefusedByName() async throws {
        let store = try await PaymentsSchemaAtVersion.store(version: 9, for: self)
        try await store.pool.withConnection { connection in
            let checks = Self.nineRules.map { "constraint \($0.name) \($0.definition)" }.joined(separator: ",\n")
            try await connection.execute(
                """
                create temporary table nine_rules (status varchar(32), grant_state varchar(16), pending_action varchar(32),
                    next_attempt_at timestamptz, ledger_event_id varchar(200), claimed boolean, user_id uuid, product_code varchar(64),
                    clawback_cycle smallint, cycle_phase varchar(32), environment varchar(16),
                    \(checks))
                """)
            try await connection.execute(
                "create temporary table verdicts (combination text, by_checks text, by_function text)")
            try await connection.execute(
                """
                do $$
                declare
                    s text; g text; pa text; na timestamptz; le text; c boolean; u uuid; pc text; cc smallint; cp text; e text;
                    by_checks text; by_function text;
                begin
                    foreach s in array array['received', 'granted', 'refunded', 'bogus'] loop
                    foreach g in array array['not_owed', 'owed', 'bogus'] loop
                    foreach pa in array array[null, 'grant', 'bogus']::text[] loop
                    foreach na in array array[null, now()]::timestamptz[] loop
                    foreach le in array array[null, 'payment.apple_iap:1']::text[] loop
                    foreach c in array array[true, false] loop
                    foreach u in array array[null, gen_random_uuid()]::uuid[] loop
                    foreach pc in array array[null, 'popular_pack']::text[] loop
                    foreach cc in array array[0, 1]::smallint[] loop
                    foreach cp in array array[null, 'clawed_back']::text[] loop
                    foreach e in array array['Sandbox', 'bogus'] loop
                        begin
                            insert into nine_rules values (s, g, pa, na, le, c, u, pc, cc, cp, e);
                            by_checks := null;
                        exception when check_violation then
                            get stacked diagnostics by_checks = constraint_name;
                        end;
                        begin
                            perform apple_iap_transactions_rules(s, g, pa, na, le, c, u, pc, cc, cp, e);
                            by_function := null;
                        exception when check_violation then
                            get stacked diagnostics by_function = constraint_name;
                        end;
                        insert into verdicts values (concat_ws(' ', s, g, pa, na is not null, le, c, u is not null, pc, cc, cp, e),
                                                     by_checks, by_function);
                    end loop; end loop; end loop; end loop; end loop; end loop; end loop; end loop; end loop; end loop; end loop;
                end
                $$
                """)
            let total = try await connection.query("select count(*) as n from verdicts").first!.int64("n")
            XCTAssertEqual(total, 9_216)
            let disagreements = try await connection.query(
                """
                select combination, coalesce(by_checks, 'accepted') as by_checks, coalesce(by_function, 'accepted') as by_function
                from verdicts where by_checks is distinct from by_function order by 1 limit 5
                """
            ).map {
                "\(try $0.string("combination")): checks \(try $0.string("by_checks")), function \(try $0.string("by_function"))"
            }
            XCTAssertEqual(disagreements, [])
            let named = try await connection.query(
                "select distinct by_checks as name from verdicts where by_checks is not null order by 1"
            )
            .map { try $0.string("name") }
            XCTAssertEqual(
                named, Self.nineRules.map(\.name), "every rule was the first one broken somewhere in the grid")
            let accepted = try await connection.query("select count(*) as n from verdicts where by_checks is null")
                .first!.int64("n")
            XCTAssertGreaterThan(accepted, 0)
        }
    }

    /// What the migration test compares across the migration.
    private struct Stored {
        var schema: SchemaSnapshot
        var purchases: [String]
        var checks: [SchemaSnapshot.TableCheck]

        static func read(_ connection: PostgresConnection) async throws -> Stored {
            return Stored(
                schema: try await SchemaSnapshot.read(connection),
                purchases: try await SchemaSnapshot.rows(
                    "apple_iap_transactions", orderedBy: "transaction_id", connection),
                checks: try await SchemaSnapshot.tableCheckDefinitions("apple_iap_transactions", connection))
        }
    }
}
