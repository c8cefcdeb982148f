import AppStoreServerAPI
import AppStoreVerification
import Foundation
import ServiceKit
import StrictJSON

/// `PaymentsService request-test-notification`: asks Apple to send a TEST
/// notification to the environment's notification URL (Request a Test
/// Notification), then polls Get Test Notification Status, bounded, until
/// Apple reports its send attempts, and prints them with the verified TEST
/// payload's notificationUUID. Checks the notification URL end to end
/// without a purchase (the service answers TEST with 200). Exit 0 when an
/// attempt succeeded, 1 otherwise, 2 on a usage or settings error.
enum RequestTestNotificationCommand {
    static let flags = [
        OptionSpec(
            flag: "--environment", env: nil,
            help: "Production or Sandbox (default: Production when APPLE_ENVIRONMENTS accepts it, else Sandbox)."),
        OptionSpec(
            flag: "--wait-seconds", env: nil, default: "30", help: "How long to poll the status, 1...300 seconds."),
    ]
    static let waitSecondsMax = 300

    static func run(arguments: [String]) async -> Int32 {
        await AdminCommand.run(
            "request-test-notification", summary: "ask Apple for a TEST notification and report its delivery",
            flags: flags, ledger: false, arguments: arguments,
            validate: { settings in
                do throws(CommandLineError) {
                    _ = try RecoverNotificationsCommand.environments(settings.value("--environment"))
                } catch {
                    settings.report(
                        SettingProblem(
                            "--environment", "must be Production or Sandbox",
                            because: "Apple sends the TEST notification to that environment's URL"))
                }
                _ = settings.integer(
                    "--wait-seconds", in: 1...Int64(waitSecondsMax), unit: "of seconds",
                    because: "it bounds how long the command polls Apple for the delivery")
            },
            body: { command in await request(command) })
    }

    private static func request(_ command: AdminCommand) async -> Int32 {
        let accepted = command.verifier.configuration.allowedEnvironments
        let chosen = (try? RecoverNotificationsCommand.environments(command.options.value("--environment"))) ?? nil
        let environment = chosen ?? (accepted.contains(.production) ? .production : .sandbox)
        let waitSeconds = Int(command.options.value("--wait-seconds") ?? "") ?? 30
        let token: String
        do {
            token = try await command.client.requestTestNotification(environment: environment)
        } catch {
            AdminCommand.printError("request-test-notification", "Request a Test Notification failed: \(error)")
            return 1
        }
        var report = JSONObject()
        report.insert("environment", .string(environment.rawValue))
        report.insert("test_notification_token", .string(token))
        let deadline = ContinuousClock.now + .seconds(waitSeconds)
        var polls = 0
        while polls < AppleSyncLimits.testNotificationPollsMax {
            polls += 1
            do {
                let status = try await command.client.testNotificationStatus(
                    testNotificationToken: token, environment: environment)
                return await finish(report, status, command: command)
            } catch  where error.apiErrorCode == .testNotificationNotFound {
                // Not sent yet: Apple sends it asynchronously.
            } catch {
                AdminCommand.printError("request-test-notification", "Get Test Notification Status failed: \(error)")
                return 1
            }
            guard ContinuousClock.now + AppleSyncLimits.testNotificationPollInterval < deadline else { break }
            try? await Task.sleep(for: AppleSyncLimits.testNotificationPollInterval)
        }
        report.insert("send_attempts", .array([]))
        report.insert("delivered", .bool(false))
        report.insert(
            "note",
            .string(
                "Apple had not sent it after \(waitSeconds) s; run Get Test Notification Status later with the token"))
        AdminCommand.output(.object(report))
        return 1
    }

    private static func finish(_ base: JSONObject, _ status: TestNotificationStatus, command: AdminCommand) async
        -> Int32
    {
        var report = base
        if let payload = status.signedPayload {
            do {
                let notification = try await command.verifier.verifyNotification(payload)
                report.insert("notification_type", .string(notification.notificationType?.rawValue ?? ""))
                report.insert("notification_uuid", .string(notification.notificationUUID ?? ""))
            } catch {
                report.insert("payload_verification", .string("refused: \(error.code)"))
            }
        }
        report.insert(
            "send_attempts",
            .array(
                status.sendAttempts.map { attempt in
                    var object = JSONObject()
                    object.insert("attempt_date_ms", attempt.attemptDate.map(JSONValue.integer) ?? .null)
                    object.insert("result", attempt.sendAttemptResult.map(JSONValue.string) ?? .null)
                    return .object(object)
                }))
        report.insert(
            "first_send_attempt_result", status.sendAttempts.first?.sendAttemptResult.map(JSONValue.string) ?? .null)
        let delivered = status.sendAttempts.contains { $0.sendAttemptResult == "SUCCESS" }
        report.insert("delivered", .bool(delivered))
        AdminCommand.output(.object(report))
        return delivered ? 0 : 1
    }
}
