import AppStoreServerAPI
import Foundation
import Logging
import ServiceKit
import UUIDText

/// Answers Apple's CONSUMPTION_REQUEST once per notification: gathers the
/// facts (the operator's setting, the user's consent, whether the grant was
/// applied, PointsService's credit lot), lets `ConsumptionAnswerRule`
/// decide, sends Send Consumption Information v2 and records the outcome.
/// A transient failure (Apple, PointsService, our database) leaves the
/// answer pending for the next pass, until Apple's 12 hours are over.
struct ConsumptionAnswerer: Sendable {
    let store: PaymentsStore
    let points: PointsLedger
    /// nil without the App Store Server API settings: nothing can be sent.
    let client: AppStoreServerAPIClient?
    let settings: ConsumptionSettings
    let logger: Logger

    /// How often pending answers are looked at.
    static let passInterval: Duration = .seconds(5)

    /// Runs every due answer (or only `notification`'s); bounded per pass.
    func runDue(only notification: UUID? = nil) async {
        let due: [ConsumptionAnswerRow]
        do {
            due = try await store.claimDueConsumptionAnswers(only: notification)
        } catch {
            logger.warning("consumption answers cannot be claimed", ["error": "\(error)"])
            return
        }
        for row in due { await answer(row) }
    }

    /// The background loop (one per instance; the lease keeps an answer to one sender).
    func run() async {
        while !Task.isCancelled {
            await runDue()
            try? await Task.sleep(for: Self.passInterval)
        }
    }

    private func answer(_ row: ConsumptionAnswerRow) async {
        let log = logger.with([
            "notification_uuid": UUIDText.lowercased(row.notificationUUID), "transaction_id": row.transactionId,
        ])
        let retrySeconds = Int64(settings.retry.components.seconds)
        func finish(_ status: String, body: String? = nil, appleStatus: Int? = nil, detail: String? = nil) async {
            do {
                try await store.finishConsumptionAnswer(
                    row.notificationUUID, status: status, bodyJSON: body, appleStatus: appleStatus,
                    detail: detail, retrySeconds: retrySeconds)
            } catch {
                log.warning("consumption answer outcome not recorded (retried after its lease)", ["error": "\(error)"])
            }
        }
        let facts: ConsumptionAnswerRule.Facts
        do {
            facts = try await gather(row)
        } catch {
            log.warning("consumption answer postponed", ["error": error.detail])
            await finish("pending", detail: error.detail)
            return
        }
        switch ConsumptionAnswerRule.decide(facts) {
        case .skip(let reason):
            log.info("consumption request not answered", ["reason": reason])
            await finish("skipped", detail: reason)
        case .postpone(let reason):
            log.info("consumption answer postponed", ["reason": reason])
            await finish("pending", detail: reason)
        case .send(let request):
            let body = Self.bodyJSON(request)
            guard let client, let environment = AppStoreServerEnvironment(rawValue: row.environment) else {
                await finish("failed", body: body, detail: "App Store Server API not configured for \(row.environment)")
                return
            }
            do {
                try await client.sendConsumptionInformation(
                    transactionId: row.transactionId, request, environment: environment)
                log.notice(
                    "consumption information sent",
                    [
                        "consumption_percentage": "\(request.consumptionPercentage ?? 0)",
                        "delivery_status": request.deliveryStatus.rawValue,
                    ])
                await finish("sent", body: body, appleStatus: 202)
            } catch {
                // Sent again until the 12 h window closes, unless Apple
                // refused the answer itself (400) or knows no such
                // transaction: a key or a base URL fixed within the window
                // (401, 403, a 404 without Apple's code) is still in time.
                let transient = !(error.kind == .badRequest || error.isNotFound)
                log.warning(
                    "consumption information not sent",
                    [
                        "error": "\(error.kind)", "http_status": "\(error.httpStatus ?? 0)",
                        "retried": "\(transient)",
                    ])
                await finish(
                    transient ? "pending" : "failed", body: body, appleStatus: error.httpStatus, detail: "\(error.kind)"
                )
            }
        }
    }

    private struct Postponed: Error { let detail: String }

    /// The facts the rule needs; throws when one cannot be known now.
    private func gather(_ row: ConsumptionAnswerRow) async throws(Postponed) -> ConsumptionAnswerRule.Facts {
        var facts = ConsumptionAnswerRule.Facts(
            enabled: settings.enabled, consented: nil, delivered: false,
            refundPreference: settings.refundPreference)
        facts.sampleContentProvided = settings.sampleContentProvided
        facts.windowLeftMilliseconds = row.deadlineUnixMilliseconds - Int64(Date().timeIntervalSince1970 * 1000)
        guard settings.enabled else { return facts }
        do {
            guard let record = try await store.find(transactionId: row.transactionId), let userId = record.userId else {
                return facts
            }
            facts.consented = try await store.consumptionConsent(userId: userId)
            facts.delivered = record.state.grant == .applied
            facts.grantOwed = record.state.grant == .owed
            guard facts.consented == true, facts.delivered else { return facts }
            switch await points.purchaseConsumption(userId: userId, transactionId: row.transactionId, requestId: nil) {
            case .success(let lot):
                if lot.found {
                    facts.credited = lot.credited
                    facts.spent = lot.spent
                }
            case .failed(let failure):
                throw Postponed(detail: failure.detail)
            }
        } catch let error as Postponed {
            throw error
        } catch {
            throw Postponed(detail: "\(error)")
        }
        return facts
    }

    /// The body as sent, for the record (every value is a number, a bool or
    /// one of Apple's documented words).
    static func bodyJSON(_ request: ConsumptionRequest) -> String {
        var members = [
            "\"customerConsented\":\(request.customerConsented)",
            "\"deliveryStatus\":\"\(request.deliveryStatus.rawValue)\"",
            "\"sampleContentProvided\":\(request.sampleContentProvided)",
        ]
        if let percentage = request.consumptionPercentage { members.append("\"consumptionPercentage\":\(percentage)") }
        if let preference = request.refundPreference {
            members.append("\"refundPreference\":\"\(preference.rawValue)\"")
        }
        return "{" + members.joined(separator: ",") + "}"
    }
}
