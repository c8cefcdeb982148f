import AppStoreVerification
import Contracts
import Foundation
import Metrics
import PostgresClient
import UUIDText

/// App Store Server Notifications V2: verify, record once by
/// `notificationUUID` together with its effect on the transaction (one local
/// transaction), answer success only after that commit, then run any owed
/// ledger step inline (the worker retries it if this attempt fails).
extension PaymentProcessor {
    /// What a notification type says about a purchase.
    enum NotificationEffect: Sendable, Equatable {
        /// REFUND, REVOKE: Apple took the purchase back (on the terms its
        /// signed transaction carries).
        case takeBack
        /// REFUND_REVERSED: the purchase stands again.
        case restore
        /// ONE_TIME_CHARGE: a one-time purchase (a consumable here). With an
        /// appAccountToken this service issued, it credits the purchase
        /// without the app (`AppleClaimRule`); otherwise it is recorded
        /// unclaimed (`received`) for the app's verify, reconciliation and support.
        case purchase
        /// CONSUMPTION_REQUEST: owes Apple a consumption answer, and its
        /// signed transaction is Apple's word on the purchase, recorded as
        /// ONE_TIME_CHARGE's: a purchase never seen (its ONE_TIME_CHARGE
        /// lost, the app never submitted it) is claimed through an
        /// appAccountToken of ours and credited, and the answer can tell
        /// Apple what was delivered. Without signed data, recorded only.
        case consumptionRequest
        case recordOnly(outcome: String)

        init(_ type: NotificationType) {
            switch type {
            case .oneTimeCharge: self = .purchase
            case .refund, .revoke: self = .takeBack
            case .refundReversed: self = .restore
            case .consumptionRequest: self = .consumptionRequest
            case .test: self = .recordOnly(outcome: "acknowledged")
            default: self = .recordOnly(outcome: "recorded")
            }
        }
    }

    /// Handles one delivery and counts it (`iap_notifications_total`): by
    /// Apple's type once the payload verified (`unknown` before), as
    /// recorded, duplicate, invalid (refused: Apple's retries will not
    /// help) or failed (ours or a dependency's: Apple retries).
    func handleNotification(_ signedPayload: String, requestId: String?) async throws(PaymentsError)
        -> HandleNotificationResponse
    {
        var type = IAPMetricLabels.unknownNotificationType
        do {
            let response = try await handleNotification(signedPayload, requestId: requestId, type: &type)
            metrics?.recordNotification(type: type, response.duplicate ? .duplicate : .recorded)
            return response
        } catch {
            metrics?.recordNotification(type: type, Self.notificationOutcome(of: error))
            throw error
        }
    }

    /// The outcome recorded for every CONSUMPTION_REQUEST.
    static let consumptionOutcome = "consumption_requested"

    static func notificationOutcome(of error: PaymentsError) -> NotificationOutcomeLabel {
        switch error {
        case .validationFailed, .transactionInvalid: .invalid
        default: .failed
        }
    }

    private func handleNotification(
        _ signedPayload: String, requestId: String?, type typeLabel: inout String
    ) async throws(PaymentsError) -> HandleNotificationResponse {
        guard !signedPayload.isEmpty else { throw .validationFailed(field: "signed_payload", problem: "is required") }
        guard signedPayload.utf8.count <= PaymentsLimits.signedPayloadBytesMax else {
            throw .validationFailed(field: "signed_payload", problem: "is larger than 64 KiB")
        }
        let notification: NotificationPayload
        do {
            notification = try await verifier.verifyNotification(signedPayload)
            metrics?.recordJWSVerification(.notification, failureCode: nil)
        } catch {
            metrics?.recordJWSVerification(.notification, failureCode: error.code)
            if error.isRetryable { throw .appleUnavailable(detail: error.code) }
            throw .transactionInvalid(jwsFailure: error.code, problem: "notification: \(error.code)")
        }
        guard let uuidText = notification.notificationUUID, let uuid = UUID(uuidString: uuidText),
            let type = notification.notificationType
        else {
            throw .transactionInvalid(
                jwsFailure: "claims", problem: "notificationUUID and notificationType are required")
        }
        typeLabel = type.rawValue
        let signedTransaction = notification.data?.signedTransactionInfo
        let transaction: JWSTransaction? =
            if let signedTransaction { try await verifiedTransaction(signedTransaction) } else { nil }
        let typeEffect = NotificationEffect(type)
        let effect =
            typeEffect == .consumptionRequest && transaction?.transactionId == nil
            ? .recordOnly(outcome: Self.consumptionOutcome) : typeEffect
        if !effect.isRecordOnly && transaction?.transactionId == nil {
            throw .transactionInvalid(
                jwsFailure: "claims", problem: "\(type.rawValue) needs data.signedTransactionInfo")
        }
        let record = NotificationRecord(
            notificationUUID: uuid, notificationType: type.rawValue, subtype: notification.subtype?.rawValue,
            environment: notification.data?.environment?.rawValue ?? notification.summary?.environment?.rawValue,
            transactionId: transaction?.transactionId,
            signedDateUnixMilliseconds: notification.signedDate?.millisecondsSince1970,
            payloadJSON: notification.payloadJSON)
        // Apple's word is as new as the notification (Apple re-sends the same
        // signed notification when it retries a delivery).
        let signedAt = notification.signedDate?.millisecondsSince1970 ?? transaction?.signedDate?.millisecondsSince1970
        // The catalog (for a claim through the appAccountToken) is asked
        // before the database transaction opens.
        let product: AppleClaimRule.ProductLookup =
            if let transaction, !effect.isRecordOnly {
                await productLookup(for: transaction, requestId: requestId)
            } else {
                .notInCatalog
            }
        let owesAnswer = type == .consumptionRequest && transaction?.transactionId != nil && record.environment != nil
        let requestedAt = notification.signedDate?.millisecondsSince1970 ?? Int64(Date().timeIntervalSince1970 * 1000)
        let recorded = try await store.recordNotification(record) { connection in
            // Apple's CONSUMPTION_REQUEST owes one answer, whatever it will
            // say (the answerer decides, and records why it sent nothing).
            if owesAnswer, let transactionId = transaction?.transactionId, let environment = record.environment {
                try await self.store.oweConsumptionAnswer(
                    notificationUUID: uuid, transactionId: transactionId, environment: environment,
                    requestedAtUnixMilliseconds: requestedAt, in: connection)
            }
            return try await self.apply(
                effect, transaction: transaction, signed: signedTransaction, signedAt: signedAt, product: product,
                in: connection)
        }

        var response = HandleNotificationResponse()
        response.notificationUuid = UUIDText.lowercased(uuid)
        response.notificationType = type.rawValue
        response.subtype = notification.subtype?.rawValue ?? ""
        if owesAnswer, let consumption {
            // Answered at once when possible, but never holding up the 200
            // Apple waits for (the client's retries may take seconds); the
            // answerer's loop picks up whatever this attempt leaves, and a
            // redelivery finds nothing pending once it was sent.
            Task { await consumption.runDue(only: uuid) }
        }
        guard let recorded else {
            response.duplicate = true
            response.outcome = try await store.notificationOutcome(uuid: uuid) ?? "recorded"
            logger.info(
                "notification redelivered",
                ["request_id": requestId ?? "", "notification_uuid": response.notificationUuid])
            return response
        }
        response.outcome = recorded.outcome
        logger.notice(
            "notification recorded",
            [
                "request_id": requestId ?? "", "notification_uuid": response.notificationUuid, "type": type.rawValue,
                "outcome": recorded.outcome, "transaction_id": transaction?.transactionId ?? "",
            ])
        if let word = recorded.detail {
            _ = await runOwedSteps(after: word, requestId: requestId)
        }
        return response
    }

    /// The notification's effect, inside the transaction that records it.
    private func apply(
        _ effect: NotificationEffect, transaction: JWSTransaction?, signed: String?, signedAt: Int64?,
        product: AppleClaimRule.ProductLookup, in connection: PostgresConnection
    ) async throws -> (outcome: String, detail: AppleWord?) {
        if case .recordOnly(let outcome) = effect { return (outcome, nil) }
        guard let transaction, let signed else { return ("ignored", nil) }
        let verdict: AppleVerdict =
            switch effect {
            case .takeBack:
                // A REFUND's transaction carries its revocation; without one the
                // notification type alone says everything was taken back.
                Self.verdict(of: transaction).revocation.map(AppleVerdict.revoked)
                    ?? .revoked(
                        Revocation(
                            type: nil, percentageMilliunits: nil, revocationReason: transaction.revocationReason,
                            dateUnixMilliseconds: transaction.revocationDate?.millisecondsSince1970))
            case .purchase, .consumptionRequest:
                // The transaction's own word (a purchase, unless Apple already revoked it).
                Self.verdict(of: transaction)
            default:
                .purchased
            }
        let word = try await recordAppleWord(
            verdict, signedAtUnixMilliseconds: signedAt, transaction: transaction, signed: signed,
            product: product, in: connection)
        if case .unclaimed(.catalogUnavailable) = word.decision, !word.word.after.state.claimed {
            // A purchase of a user of ours that only the catalog kept from
            // being claimed: rolled back with the notification, and answered
            // retryable, so Apple delivers it again once the catalog can be read.
            throw PaymentsError.pointsUnavailable(detail: "catalog unavailable: the purchase cannot be claimed yet")
        }
        return (Self.outcomeLabel(effect, word.word, decision: word.decision), word)
    }

    /// What a notification did, from the row before and after its effect
    /// (and, for a purchase, why Apple's word did not claim it).
    static func outcomeLabel(
        _ effect: NotificationEffect, _ word: PaymentsStore.WordResult,
        decision: AppleClaimRule.Decision = .unclaimed(.noAccountToken)
    ) -> String {
        guard word.accepted else { return "stale_ignored" }
        let before = word.before, after = word.after
        let step = after.pendingStep, stepBefore = before?.pendingStep
        switch effect {
        case .recordOnly(let outcome):
            return outcome
        case .consumptionRequest:
            // Operators read the request itself; what it did to the purchase
            // is in the row (and the grant's own audit line).
            return consumptionOutcome
        case .purchase:
            if after.state.claimed && !(before?.state.claimed ?? false) {
                return step == .grant ? "grant_scheduled" : "claimed"
            }
            if after.state.claimed { return "already_claimed" }
            if case .unclaimed(let reason) = decision { return "received_\(reason.rawValue)" }
            return "received"
        case .takeBack:
            if before == nil || !(before!.state.claimed) {
                return after.status == .revoked ? "revoked_before_verify" : "recorded"
            }
            if case .clawback = step, step != stepBefore { return "clawback_scheduled" }
            if step == .grant { return "clawback_scheduled" }
            if case .reverse = step, step != stepBefore { return "clawback_scheduled" }
            if after.status == .revoked && before?.status != .revoked { return "revoked" }
            return "already_taken_back"
        case .restore:
            guard let before else { return "recorded" }
            if step == .grant && stepBefore != .grant { return "grant_scheduled" }
            if case .reverse = step, step != stepBefore { return "restore_scheduled" }
            if case .clawback = step { return "restore_scheduled" }
            if before.state.verdict != after.state.verdict { return "reinstated" }
            return "nothing_to_restore"
        }
    }
}

extension PaymentProcessor.NotificationEffect {
    var isRecordOnly: Bool {
        if case .recordOnly = self { return true }
        return false
    }
}
