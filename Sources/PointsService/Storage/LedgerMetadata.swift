import Foundation
import StrictJSON

/// The `metadata` jsonb of ledger rows, in the `{"ext": {...}}` shape of
/// docs/protocols/common/user-points-chat-data-protocol.md (section 3).
enum LedgerMetadata {
    static func purchase(_ grant: ValidatedGrant) -> String {
        JSONWriter.string(of: purchaseDocument(grant))
    }

    /// `purchase` as a value, for a statement that carries many (`GrantBatchStatement`).
    static func purchaseDocument(_ grant: ValidatedGrant) -> JSONValue {
        document([
            "source": grant.source.source,
            "platform": grant.source.platform,
            "product_code": grant.package.productCode,
            "app_store_product_id": grant.package.appStoreProductId,
            "transaction_id": grant.source.transactionId,
            "original_transaction_id": grant.source.originalTransactionId,
            "environment": grant.source.environment,
            "apple_iap_transaction_id": grant.source.paymentRecordId,
            // The row's credits (package_credits x quantity).
            "credits": grant.credits,
            "package_credits": grant.package.credits,
            "quantity": Int(grant.quantity),
        ])
    }

    /// `requestedAmount` is what this clawback takes back (the request's
    /// amount, or all of `purchaseCredits` when it asked for 0): the row's
    /// amount + overdue_amount == requested_amount <= purchase_credits.
    /// `cycle` counts the purchase's clawbacks: 1 for the first, n for the
    /// one after n - 1 reversals (PaymentsService's refund cycle n).
    /// `spent_attributed` (only when > 0): what it took from other lots
    /// as their spent credits, which its reversal takes off them again.
    static func refund(
        _ clawback: ValidatedClawback, plan: ClawbackPlan, requestedAmount: Int64, purchaseCredits: Int64,
        cycle: Int64, spentAttributed: Int64
    ) -> String {
        var ext: [String: any Sendable] = [
            "refund_cycle": cycle,
            "original_event_id": clawback.originalEventId,
            "refund_reason": clawback.reason,
            "requested_amount": requestedAmount,
            "overdue_amount": plan.overdueAmount,
            "purchase_credits": purchaseCredits,
        ]
        if spentAttributed > 0 { ext["spent_attributed"] = spentAttributed }
        return encode(ext)
    }

    /// `overdue_settled_restored`, only when spend reversals had settled
    /// part of the clawback's overdue: that part comes back too.
    static func reversal(_ reversal: ValidatedReversal, plan: ReversalPlan) -> String {
        var ext: [String: any Sendable] = [
            "clawback_event_id": reversal.clawbackEventId,
            "credits_restored": plan.creditsRestored,
        ]
        if plan.overdueSettledRestored > 0 { ext["overdue_settled_restored"] = plan.overdueSettledRestored }
        return encode(ext)
    }

    /// A spend reversal's row; `overdue_settled` (only when > 0) is what it
    /// gave to owed clawbacks instead of the user, so a replay answers the
    /// first result (`StoredLedgerEvent.overdueSettled`).
    static func spendReversal(_ reversal: ValidatedSpendReversal, overdueSettled: Int64) -> String {
        var ext: [String: any Sendable] = ["spend_event_id": reversal.spendEventId]
        if overdueSettled > 0 { ext["overdue_settled"] = overdueSettled }
        return encode(ext)
    }

    /// A `refund_settlement` row: which clawback it pays, from which spend
    /// reversal, and the clawback's outstanding overdue before and after.
    static func settlement(_ settlement: OverdueSettlement, reversal: ValidatedSpendReversal) -> String {
        encode([
            "clawback_event_id": settlement.clawbackEventId,
            "original_event_id": settlement.purchaseEventId,
            "spend_event_id": reversal.spendEventId,
            "spend_reversal_event_id": reversal.eventId,
            "overdue_before": settlement.outstandingBefore,
            "overdue_after": settlement.outstandingAfter,
        ])
    }

    /// Who adjusted, why, and the signed amount; `source` marks it as an
    /// operator's hand, not a purchase or a refund.
    static func adjustment(_ adjustment: ValidatedAdjustment) -> String {
        encode([
            "source": "operator",
            "operator": adjustment.operatorName,
            "reason": adjustment.reason,
            "amount": adjustment.amount,
        ])
    }

    /// `document` written by the one JSON writer (StrictJSON).
    private static func encode(_ ext: [String: any Sendable]) -> String {
        JSONWriter.string(of: document(ext))
    }

    /// `{"ext": {...}}` with the members in key order (stable text for audit diffs).
    private static func document(_ ext: [String: any Sendable]) -> JSONValue {
        var members = JSONObject()
        for key in ext.keys.sorted() {
            let value: JSONValue =
                switch ext[key] {
                case let text as String: .string(text)
                case let number as Int64: .integer(number)
                case let number as Int: .integer(Int64(number))
                case let number as Int32: .integer(Int64(number))
                case let flag as Bool: .bool(flag)
                default: preconditionFailure("ledger metadata holds strings, integers and booleans only (\(key))")
                }
            members.insert(key, value)
        }
        var document = JSONObject()
        document.insert("ext", .object(members))
        return .object(document)
    }
}
