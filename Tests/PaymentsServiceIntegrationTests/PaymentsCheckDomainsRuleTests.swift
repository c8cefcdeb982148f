import Foundation
@testable import PaymentsService
import PostgresClient
import XCTest

/// After migration 7 the rules it moved into domains refuse what their
/// table CHECKs refused, on INSERT and on UPDATE, naming the domain's
/// constraint (SQLSTATE 23514) and writing nothing; the rules it left as
/// table CHECKs still fire; and values still bind into the domain columns
/// the ways the store's statements bind them.
final class PaymentsCheckDomainsRuleTests: XCTestCase {
    /// Each moved column, a value its rule refuses, and the constraint that says so.
    private static let refusals: [(column: String, value: String, constraint: String)] = [
        ("credits", "-1", "credit_amount_not_negative"),
        ("overdue_amount", "-1", "credit_amount_not_negative"),
        ("cycle_amount", "-1", "credit_amount_not_negative"),
        ("cycle_deducted", "-1", "credit_amount_not_negative"),
        ("quantity", "0", "purchase_quantity_in_range"),
        ("quantity", "11", "purchase_quantity_in_range"),
        ("revocation_percentage", "-1", "revocation_milli_percent_in_range"),
        ("revocation_percentage", "100001", "revocation_milli_percent_in_range"),
        ("clawback_cycle", "-1", "clawback_cycle_number_not_negative"),
        ("cycle_phase", "'clawing'", "clawback_cycle_phase_known"),
    ]

    func testEachDomainRefusesABadValueInAnUpdateAndWritesNothing() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        let row = try await rowText(store, payment.transactionId)
        for refusal in Self.refusals {
            try await expectRefusal(store, by: refusal.constraint, "update \(refusal.column) = \(refusal.value)") {
                try await $0.query(
                    "update apple_iap_transactions set \(refusal.column) = \(refusal.value) where transaction_id = $1",
                    [.text(payment.transactionId)])
            }
            // A parameter with no type is read as the column's domain, so the rule refuses it as it binds.
            try await expectRefusal(store, by: refusal.constraint, "update \(refusal.column) = $2 ← \(refusal.value)") {
                try await $0.query(
                    "update apple_iap_transactions set \(refusal.column) = $2 where transaction_id = $1",
                    [.text(payment.transactionId), .text(refusal.value.trimmingCharacters(in: ["'"]))])
            }
        }
        let unchanged = try await rowText(store, payment.transactionId)
        XCTAssertEqual(unchanged, row, "no refused update wrote anything")
    }

    func testEachDomainRefusesABadValueInAnInsertAndWritesNothing() async throws {
        let store = try await PaymentsTestDatabase.store()
        for refusal in Self.refusals {
            let transactionId = PaymentsTestDatabase.randomTransactionId()
            var values: [String: String] = [
                "id": "gen_random_uuid()", "user_id": "gen_random_uuid()", "product_code": "'starter_pack'",
                "app_store_product_id": "'com.meeyao.qianwen.starter_pack'", "transaction_id": "'\(transactionId)'",
                "environment": "'Sandbox'", "bundle_id": "'com.meeyao.qianwen'", "purchase_date": "now()",
                "status": "'verified'",
                "credits": "100", "signed_transaction_info": "'header.payload.signature'",
            ]
            values[refusal.column] = refusal.value
            let columns = values.keys.sorted()
            let insert =
                "insert into apple_iap_transactions (\(columns.joined(separator: ", "))) values (\(columns.map { values[$0]! }.joined(separator: ", ")))"
            try await expectRefusal(store, by: refusal.constraint, "insert \(refusal.column) = \(refusal.value)") {
                try await $0.query(insert)
            }
            let count = try await store.pool.withConnection {
                try await $0.query(
                    "select count(*) as n from apple_iap_transactions where transaction_id = $1", [.text(transactionId)]
                ).first!.int64("n")
            }
            XCTAssertEqual(count, 0, "the refused insert of \(refusal.column) wrote nothing")
        }
    }

    func testTheRulesLeftAsTableChecksStillFire() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        let row = try await rowText(store, payment.transactionId)
        let updates = [
            ("clawback_cycle = 1", "apple_iap_transactions_cycle_phase"),
            ("cycle_phase = 'clawed_back'", "apple_iap_transactions_cycle_phase"),
            ("next_attempt_at = null", "apple_iap_transactions_check2"),
            ("status = 'granted', ledger_event_id = null", "apple_iap_transactions_check3"),
            ("user_id = null", "apple_iap_transactions_claimed_owner"),
            ("claimed = false", "apple_iap_transactions_grant_owed_claimed"),
            ("environment = 'Staging'", "apple_iap_transactions_environment_check"),
            ("status = 'paid'", "apple_iap_transactions_status_check"),
            ("pending_action = 'refund'", "apple_iap_transactions_pending_action_check"),
            ("grant_state = 'maybe'", "apple_iap_transactions_grant_state_check"),
        ]
        for (assignment, constraint) in updates {
            try await expectRefusal(store, by: constraint, assignment) {
                try await $0.query(
                    "update apple_iap_transactions set \(assignment) where transaction_id = $1",
                    [.text(payment.transactionId)])
            }
        }
        let unchanged = try await rowText(store, payment.transactionId)
        XCTAssertEqual(unchanged, row)
        let answer = UUID()
        try await store.pool.withTransaction {
            try await store.oweConsumptionAnswer(
                notificationUUID: answer, transactionId: payment.transactionId, environment: "Sandbox",
                requestedAtUnixMilliseconds: 1_738_645_800_000, in: $0)
        }
        for (assignment, constraint) in [
            ("status = 'lost'", "consumption_answers_status_check"), ("status = 'sent'", "consumption_answers_check"),
        ] {
            try await expectRefusal(store, by: constraint, assignment) {
                try await $0.query(
                    "update consumption_answers set \(assignment) where notification_uuid = $1::uuid", [.uuid(answer)])
            }
        }
    }

    func testValuesBindIntoAndCompareWithDomainColumnsAsTheStoreBindsThem() async throws {
        let store = try await PaymentsTestDatabase.store()
        let payment = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, payment)
        let id = PostgresValue.text(payment.transactionId)
        try await store.pool.withConnection { connection in
            // Typed and untyped parameters into domain columns, read back through RETURNING.
            let typed = try await connection.query(
                """
                update apple_iap_transactions set credits = $2::bigint, quantity = $3::integer, clawback_cycle = $4::integer,
                    cycle_phase = $5::text, cycle_amount = $6::bigint
                where transaction_id = $1 returning credits, quantity, clawback_cycle, cycle_phase, cycle_amount
                """, [id, .int64(150), .int64(2), .int64(1), .text("clawback_owed"), .int64(150)]
            ).first!
            XCTAssertEqual(try typed.int64("credits"), 150)
            XCTAssertEqual(try typed.int64("quantity"), 2)
            XCTAssertEqual(try typed.int64("clawback_cycle"), 1)
            XCTAssertEqual(try typed.string("cycle_phase"), "clawback_owed")
            let untyped = try await connection.query(
                """
                update apple_iap_transactions set credits = $2, cycle_phase = $3, revocation_percentage = $4
                where transaction_id = $1 returning credits, cycle_phase, revocation_percentage
                """, [id, .int64(160), .text("clawed_back"), .int64(25_000)]
            ).first!
            XCTAssertEqual(try untyped.int64("credits"), 160)
            XCTAssertEqual(try untyped.string("cycle_phase"), "clawed_back")
            XCTAssertEqual(try untyped.int64("revocation_percentage"), 25_000)
            // Comparisons: = with an untyped and a typed parameter, IN, = ANY of an array parameter.
            let matches: [(String, [PostgresValue])] = [
                ("cycle_phase = $2", [.text("clawed_back")]),
                ("cycle_phase = $2::text", [.text("clawed_back")]),
                ("cycle_phase in ('clawed_back', 'reversed')", []),
                ("cycle_phase = any($2)", [.text("{clawed_back,reversed}")]),
                ("credits = any($2::bigint[])", [.text("{1,160}")]),
                ("credits = $2 and quantity = $3 and clawback_cycle >= $4", [.int64(160), .int64(2), .int64(1)]),
                ("credits between $2::bigint and $3::bigint", [.int64(100), .int64(200)]),
                ("cycle_phase like 'clawed%'", []),
            ]
            for (condition, parameters) in matches {
                let count = try await connection.query(
                    "select count(*) as n from apple_iap_transactions where transaction_id = $1 and \(condition)",
                    [id] + parameters)
                XCTAssertEqual(try count.first!.int64("n"), 1, condition)
            }
        }
        // And the store reads the row back through its own mapping.
        let record = try await store.find(transactionId: payment.transactionId)
        XCTAssertEqual(record?.state.credits, 160)
        XCTAssertEqual(record?.state.cycle?.phase, .clawedBack)
        XCTAssertEqual(record?.quantity, 2)
    }

    private func rowText(_ store: PaymentsStore, _ transactionId: String) async throws -> String {
        try await store.pool.withConnection {
            try await $0.query(
                "select t::text as row from apple_iap_transactions t where transaction_id = $1", [.text(transactionId)]
            ).first!.string("row")
        }
    }

    /// `statement` must fail with check_violation naming `constraint`.
    private func expectRefusal(
        _ store: PaymentsStore, by constraint: String, _ what: String,
        _ statement: @escaping @Sendable (PostgresConnection) async throws -> Void,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        do {
            try await store.pool.withConnection { try await statement($0) }
            XCTFail("\(what) was accepted", file: file, line: line)
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "23514", "\(what): \(error)", file: file, line: line)
            XCTAssertTrue(
                error.message.contains("\"\(constraint)\""), "\(what): \(error.message)", file: file, line: line)
        }
    }
}
