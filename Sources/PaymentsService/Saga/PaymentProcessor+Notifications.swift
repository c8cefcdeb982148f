import AppStoreVerification
import Contracts
import Foundation
import PostgresClient

/// App Store Server Notifications V2: verify, record once by
/// `notificationUUID` together with its effect on the transaction (one local
/// transaction), answer success only after that commit, then run any owed
/// compensation inline (the worker retries it if this attempt fails).
extension PaymentProcessor {
    /// What a notification type does to a purchase.
    enum NotificationEffect: Sendable, Equatable {
        case takeBack
        case restore
        case recordOnly(outcome: String)

        init(_ type: NotificationType) {
            switch type {
            case .refund, .revoke: self = .takeBack
            case .refundReversed: self = .restore
            case .consumptionRequest: self = .recordOnly(outcome: "consumption_requested")
            case .test: self = .recordOnly(outcome: "acknowledged")
            default: self = .recordOnly(outcome: "recorded")
            }
        }

        var needsTransaction: Bool {
            if case .recordOnly = self { return false }
            return true
        }
    }

    func handleNotification(_ signedPayload: String, requestId: String?) async throws(PaymentsError) -> HandleNotificationResponse {
        guard !signedPayload.isEmpty else { throw .validationFailed(field: "signed_payload", problem: "is required") }
        guard signedPayload.utf8.count <= PaymentsLimits.signedPayloadBytesMax else {
            throw .validationFailed(field: "signed_payload", problem: "is larger than 64 KiB")
        }
        let notification: NotificationPayload
        do {
            notification = try await verifier.verifyNotification(signedPayload)
        } catch {
            if error.isRetryable { throw .appleUnavailable(detail: error.code) }
            throw .transactionInvalid(jwsFailure: error.code, problem: "notification: \(error.code)")
        }
        guard let uuidText = notification.notificationUUID, let uuid = UUID(uuidString: uuidText),
              let type = notification.notificationType else {
            throw .transactionInvalid(jwsFailure: "claims", problem: "notificationUUID and notificationType are required")
        }
        let signedTransaction = notification.data?.signedTransactionInfo
        let transaction: JWSTransaction? = if let signedTransaction { try await verifiedTransaction(signedTransaction) } else { nil }
        let effect = NotificationEffect(type)
        if effect.needsTransaction && transaction?.transactionId == nil {
            throw .transactionInvalid(jwsFailure: "claims", problem: "\(type.rawValue) needs data.signedTransactionInfo")
        }
        let record = NotificationRecord(
            notificationUUID: uuid, notificationType: type.rawValue, subtype: notification.subtype?.rawValue,
            environment: notification.data?.environment?.rawValue ?? notification.summary?.environment?.rawValue,
            transactionId: transaction?.transactionId, signedDateUnixMilliseconds: notification.signedDate?.millisecondsSince1970,
            payloadJSON: notification.payloadJSON)
        let knownPackages = catalog.lastKnown
        let recorded = try await store.recordNotification(
            record,
            effect: { current, connection in
                try await self.apply(effect, to: current, transaction: transaction, signed: signedTransaction,
                                     packages: knownPackages, in: connection)
            },
            outcome: { before, after in Self.outcomeLabel(effect, before: before, after: after) })

        var response = HandleNotificationResponse()
        response.notificationUuid = uuid.uuidString.lowercased()
        response.notificationType = type.rawValue
        response.subtype = notification.subtype?.rawValue ?? ""
        guard let recorded else {
            response.duplicate = true
            response.outcome = try await store.notificationOutcome(uuid: uuid) ?? "recorded"
            logger.info("notification redelivered", ["request_id": requestId ?? "", "notification_uuid": response.notificationUuid])
            return response
        }
        response.outcome = recorded.outcome
        logger.notice("notification recorded", [
            "request_id": requestId ?? "", "notification_uuid": response.notificationUuid, "type": type.rawValue,
            "outcome": recorded.outcome, "transaction_id": transaction?.transactionId ?? "",
        ])
        if let owed = recorded.record, owed.state.pendingAction != nil, let claimed = try? await store.claim(transactionId: owed.transactionId) {
            await runPendingStep(claimed, requestId: requestId)
        }
        return response
    }

    /// What a notification did, from the row before and after its effect.
    static func outcomeLabel(_ effect: NotificationEffect, before: PaymentRecord?, after: PaymentRecord?) -> String {
        switch effect {
        case .recordOnly(let outcome):
            return outcome
        case .takeBack:
            guard let after else { return "ignored" }
            if after.state.pendingAction == .clawback && before?.state.pendingAction != .clawback { return "clawback_scheduled" }
            if before == nil && after.state.status == .revoked { return "revoked_before_verify" }
            if after.state.status == .revoked && before?.state.status != .revoked { return "revoked" }
            return "already_taken_back"
        case .restore:
            guard let before, let after, after.state != before.state else { return "nothing_to_restore" }
            return after.state.pendingAction == .reverseClawback ? "restore_scheduled" : "clawback_cancelled"
        }
    }

    /// The notification's effect, inside the transaction that records it.
    private func apply(
        _ effect: NotificationEffect, to current: PaymentRecord?, transaction: JWSTransaction?, signed: String?,
        packages: [Contracts.Package], in connection: PostgresConnection
    ) async throws -> PaymentRecord? {
        switch effect {
        case .recordOnly:
            return nil
        case .takeBack:
            guard let transaction, let signed else { return nil }
            let takeBack = PaymentsStore.StepResult(
                transition: PaymentSaga.afterRefundNotice,
                revocationDateUnixMilliseconds: transaction.revocationDate?.millisecondsSince1970,
                revocationReason: transaction.revocationReason.map { String($0) })
            guard let current else {
                // Never verified here: record it revoked so a later verify is refused.
                let owner = try await transaction.appAccountToken.asyncFlatMap { try await store.userId(forAccountToken: $0, in: connection) }
                let productCode = packages.first { $0.appStoreProductId == transaction.productId }?.productCode
                if let inserted = try await store.insertRevoked(
                    Self.revokedPayment(transaction, signed: signed, userId: owner, productCode: productCode), in: connection) {
                    return inserted
                }
                // A verify recorded the purchase after our read (the insert
                // waited for it and did nothing): take that row back instead,
                // or the refund would be lost while the purchase is credited.
                guard let transactionId = transaction.transactionId,
                      let raced = try await store.lockedRecord(transactionId, in: connection) else { return nil }
                return try await store.write(takeBack, over: raced, in: connection)
            }
            return try await store.write(takeBack, over: current, in: connection)
        case .restore:
            guard let current else { return nil }
            return try await store.write(.init(transition: PaymentSaga.afterRefundReversedNotice), over: current, in: connection)
        }
    }
}

extension Optional {
    func asyncFlatMap<Mapped>(_ transform: (Wrapped) async throws -> Mapped?) async rethrows -> Mapped? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
