import Foundation
import Logging
import RPCCore
import RPCRuntime

/// Runs one gRPC service process the same way for every service: start the
/// server, announce readiness, wait for SIGTERM/SIGINT, then shut down
/// gracefully (health turns NOT_SERVING, GOAWAY, in-flight calls finish
/// within the grace period, then `cleanup`).
public enum ServiceRunner {
    /// Parses options or prints `--help`/usage errors and exits. With
    /// `subcommands`, anything else in the subcommand's place (or a second
    /// word) is refused here, with exit 2, before the process reads a
    /// setting or connects to anything.
    public static func options(
        program: String, summary: String, specs: [OptionSpec], subcommands: [(String, String)] = []
    ) -> CommandLineOptions {
        do {
            let options = try CommandLineOptions(
                specs: specs, arguments: Array(CommandLine.arguments.dropFirst()),
                environment: ProcessInfo.processInfo.environment)
            if options.helpRequested {
                print(options.helpText(program: program, summary: summary, subcommands: subcommands))
                exit(0)
            }
            if let problem = subcommandProblem(options.positional, known: subcommands.map(\.0)) {
                FileHandle.standardError.write(Data("\(program): \(problem)\n".utf8))
                exit(2)
            }
            return options
        } catch {
            FileHandle.standardError.write(Data("\(program): \(error)\n".utf8))
            exit(2)
        }
    }

    /// Why the words outside flags are not a known subcommand; nil when
    /// they are (or there are none, or no subcommands are declared).
    public static func subcommandProblem(_ positional: [String], known: [String]) -> String? {
        guard !known.isEmpty, let first = positional.first else { return nil }
        guard known.contains(first) else {
            return "unknown subcommand \"\(first)\" (one of \(known.joined(separator: ", ")); see --help)"
        }
        guard positional.count == 1 else {
            return "unexpected argument \"\(positional[1])\" after \(first) (see --help)"
        }
        return nil
    }

    /// Reads a process's settings with `read`, which reports every missing
    /// or wrong value to the collector; if there is any, prints each as one
    /// sentence on stderr (`Program: sentence`) and exits with status 2.
    public static func settings<T>(
        program: String, options: CommandLineOptions, _ read: (inout SettingsCollector) -> T?
    ) -> T {
        var collector = SettingsCollector(options)
        let value = read(&collector)
        do {
            try collector.finish()
        } catch {
            refuse(program: program, error)
        }
        guard let value else {
            preconditionFailure("\(program): a reading returned nothing without reporting a problem")
        }
        return value
    }

    /// Prints every problem of `error` and exits with status 2.
    public static func refuse(program: String, _ error: SettingsError) -> Never {
        FileHandle.standardError.write(Data(error.report(program: program).utf8))
        exit(2)
    }

    public static func serve(
        name: String,
        listen: HostAndPort,
        tls: TLSConfiguration?,
        router: Router,
        monitor: HealthMonitor,
        logger: Logger,
        shutdown: ShutdownSignal,
        gracePeriod: Duration = .seconds(10),
        handlersOnLoop: Bool = false,
        loop: EventLoop? = nil,
        cleanup: @Sendable () async -> Void
    ) async throws {
        let server = RPCServer(
            configuration: .init(
                listen: .init(host: listen.host, port: listen.port), tls: tls, handlersOnLoop: handlersOnLoop),
            router: router, loop: loop)
        let port = try server.start()
        logger.notice("listening", ["address": "\(listen.host):\(port)", "tls": tls == nil ? "off" : "on"])
        // Scripts and tests wait for this line on stdout.
        FileHandle.standardOutput.write(Data("\(name) listening on \(listen.host):\(port)\n".utf8))
        let signal = await shutdown.wait()
        logger.notice("shutting down", ["signal": signal])
        monitor.beginShutdown()
        await server.shutdown(gracePeriod: gracePeriod)
        await cleanup()
        logger.notice("stopped")
    }
}
