import AppStoreServerAPI
import Foundation
import ServiceKit
import StrictJSON
import UTCTime

/// `PaymentsService recover-notifications --since <ISO date or hours>`:
/// reads Get Notification History for a window (e.g. an outage) in each
/// environment the deployment accepts, or `--environment`, and feeds every
/// notification through the service's own notification path: one that was
/// already processed changes nothing. `--until` ends the window (default
/// now); `--only-failures` asks only for notifications Apple could not
/// deliver. The start is kept inside Apple's reach (180 days in production,
/// 30 in sandbox). Prints one JSON line with what each environment's walk
/// did. Exit 0 when every window was read to its end and nothing was
/// refused, 1 otherwise, 2 on a usage or settings error. Safe while the
/// service's recovery job runs (this command does not move its resume point).
enum RecoverNotificationsCommand {
    static let flags = [
        OptionSpec(
            flag: "--since", env: nil,
            help:
                "Start of the window: an ISO 8601 date or time (2026-05-01, 2026-05-01T08:00:00Z) or a number of hours ago."
        ),
        OptionSpec(flag: "--until", env: nil, help: "End of the window, ISO 8601 (default: now)."),
        OptionSpec(
            flag: "--environment", env: nil,
            help: "Production or Sandbox (default: each one APPLE_ENVIRONMENTS accepts)."),
        OptionSpec(
            flag: "--only-failures", env: nil, default: "0",
            help: "1 (or the bare flag): only notifications Apple failed to deliver."),
    ]

    static func run(arguments: [String]) async -> Int32 {
        await AdminCommand.run(
            "recover-notifications",
            summary:
                "feed App Store notifications of a past window (Get Notification History) through the notification path",
            flags: flags, ledger: true, arguments: expandingBareFlags(arguments),
            validate: { settings in validate(&settings, nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)) },
            body: { command in await recover(command) })
    }

    /// Reports every problem of the command's own flags.
    static func validate(_ settings: inout SettingsCollector, nowMilliseconds now: Int64) {
        let windowReason = "it bounds the window of notifications read from Apple's history"
        var start: Int64?
        if let text = settings.required("--since", because: windowReason) {
            do { start = try since(text, nowMilliseconds: now) } catch {
                settings.report(
                    SettingProblem(
                        "--since",
                        "must be a number of hours (1...\(hoursMax)), an ISO 8601 date (2026-05-01) "
                            + "or a time with a zone (2026-05-01T08:00:00Z)", because: windowReason))
            }
        }
        var end: Int64? = now
        if let text = settings.value("--until") {
            do { end = try instant(text, name: "--until") } catch {
                end = nil
                settings.report(
                    SettingProblem(
                        "--until", "must be an ISO 8601 date (2026-05-01) or a time with a zone (2026-05-01T08:00:00Z)",
                        because: windowReason))
            }
        }
        if let start, let end, start >= end {
            settings.report(SettingProblem("--since", "must be before --until", because: windowReason))
        }
        do throws(CommandLineError) { _ = try environments(settings.value("--environment")) } catch {
            settings.report(
                SettingProblem(
                    "--environment", "must be Production or Sandbox", because: "Apple keeps one history per environment"
                ))
        }
        if (try? AppleVerificationSettings.flag(settings.value("--only-failures") ?? "0", name: "--only-failures"))
            == nil
        {
            settings.report(
                SettingProblem(
                    "--only-failures", "must be 0 or 1",
                    because: "1 asks only for notifications Apple failed to deliver"))
        }
    }

    /// A bare `--only-failures` means `--only-failures 1`.
    static func expandingBareFlags(_ arguments: [String]) -> [String] {
        var expanded: [String] = []
        for (index, argument) in arguments.enumerated() {
            let next = index + 1 < arguments.count ? arguments[index + 1] : nil
            if argument == "--only-failures", next == nil || next!.hasPrefix("--") {
                expanded.append("--only-failures=1")
            } else {
                expanded.append(argument)
            }
        }
        return expanded
    }

    /// The longest look-back accepted in hours (Apple keeps 180 days).
    static let hoursMax = 180 * 24

    /// `--since`: hours ago (a whole number, 1...hoursMax) or an ISO 8601 date or time; UNIX ms.
    static func since(_ text: String, nowMilliseconds now: Int64) throws(CommandLineError) -> Int64 {
        if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) {
            guard let hours = Int64(text), (1...Int64(hoursMax)).contains(hours) else {
                throw CommandLineError("--since hours must be 1...\(hoursMax)")
            }
            return now - hours * 3_600_000
        }
        return try instant(text, name: "--since")
    }

    /// An RFC 3339 date (UTC midnight) or date-time with a zone; UNIX ms.
    static func instant(_ text: String, name: String) throws(CommandLineError) -> Int64 {
        // A time must say its zone (an operator's local time is not the
        // server's): the RFC 3339 reader refuses one without.
        if let instant = UTCDateTime.unixMilliseconds(rfc3339: text) ?? UTCDateTime.unixMilliseconds(fullDate: text) {
            return instant
        }
        throw CommandLineError(
            "\(name) must be an ISO 8601 date (2026-05-01) or time with a zone (2026-05-01T08:00:00Z)\(name == "--since" ? ", or hours" : "")"
        )
    }

    /// `--environment`, or nil for every accepted one.
    static func environments(_ text: String?) throws(CommandLineError) -> AppStoreServerEnvironment? {
        guard let text, !text.isEmpty else { return nil }
        guard let environment = AppStoreServerEnvironment(rawValue: text) else {
            throw CommandLineError("--environment must be Production or Sandbox")
        }
        return environment
    }

    private static func recover(_ command: AdminCommand) async -> Int32 {
        guard let processor = command.processor else { return 2 }
        let options = command.options
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        guard let since = try? since(options.value("--since") ?? "", nowMilliseconds: now),
            let onlyFailures = try? AppleVerificationSettings.flag(
                options.value("--only-failures") ?? "0", name: "--only-failures")
        else { return 2 }
        let end = (try? options.value("--until").map { try instant($0, name: "--until") }) ?? now
        let recovery = NotificationRecovery(client: command.client, processor: processor, logger: command.logger)
        let chosen = (try? environments(options.value("--environment"))) ?? nil
        let targets =
            chosen.map { [$0] }
            ?? Reconciler(client: command.client, processor: processor, logger: command.logger).environments
        var reports: [JSONValue] = []
        var ok = !targets.isEmpty
        for environment in targets {
            let earliest = NotificationRecoveryWindow.earliestStart(
                now: now, environment: environment,
                marginMilliseconds: AppleSyncLimits.reachMargin.wholeMilliseconds)
            let start = max(since, earliest)
            var report = JSONObject()
            report.insert("environment", .string(environment.rawValue))
            report.insert("start_ms", .integer(start))
            report.insert("end_ms", .integer(end))
            report.insert("only_failures", .bool(onlyFailures))
            report.insert("clamped_to_reach", .bool(start != since))
            guard start < end else {
                report.insert("complete", .bool(false))
                report.insert("stopped", .string("the window is older than Apple's history"))
                reports.append(.object(report))
                ok = false
                continue
            }
            let request = NotificationHistoryRequest(
                startDate: start, endDate: end, onlyFailures: onlyFailures ? true : nil)
            let (tally, walked) = await recovery.walk(
                request, from: nil, environment: environment,
                pagesMax: AppleSyncLimits.notificationPagesPerCommandMax,
                requestId: "recover-notifications"
            ) { _ in true }
            report.insert("pages", .integer(Int64(tally.pages)))
            report.insert("recorded", .integer(Int64(tally.recorded)))
            report.insert("duplicates", .integer(Int64(tally.duplicates)))
            report.insert("skipped", .integer(Int64(tally.skipped)))
            report.insert("complete", .bool(walked == .complete))
            report.insert("stopped", walked == .complete ? .null : .string(NotificationRecovery.label(walked)))
            reports.append(.object(report))
            ok = ok && walked == .complete && tally.skipped == 0
        }
        var object = JSONObject()
        object.insert("environments", .array(reports))
        object.insert("complete", .bool(ok))
        AdminCommand.output(.object(object))
        return ok ? 0 : 1
    }
}
