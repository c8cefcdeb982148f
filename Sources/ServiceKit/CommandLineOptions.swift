/// One configurable setting of a service: a `--flag`, its environment
/// variable, a default, and the help text `--help` prints.
public struct OptionSpec: Sendable {
    public var flag: String?
    public var environmentVariable: String?
    public var defaultValue: String?
    public var help: String
    /// Secrets are never echoed back (help shows "set" / "unset" only).
    public var isSecret: Bool

    public init(flag: String?, env: String?, default defaultValue: String? = nil, help: String, isSecret: Bool = false)
    {
        self.flag = flag
        self.environmentVariable = env
        self.defaultValue = defaultValue
        self.help = help
        self.isSecret = isSecret
    }
}

/// Why the command line could not be understood.
public struct CommandLineError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The operator contract shared by every service: flags win over environment
/// variables, which win over defaults; `--help` lists everything.
public struct CommandLineOptions: Sendable {
    public let specs: [OptionSpec]
    /// Values by flag (or environment variable name when there is no flag).
    private var values: [String: String] = [:]
    /// Words that were not options (e.g. a subcommand such as `migrate`).
    public private(set) var positional: [String] = []
    public private(set) var helpRequested = false

    public init(specs: [OptionSpec], arguments: [String], environment: [String: String]) throws {
        self.specs = specs
        for spec in specs {
            let key = Self.key(spec)
            if let env = spec.environmentVariable, let value = environment[env], !value.isEmpty {
                values[key] = value
            } else if let value = spec.defaultValue {
                values[key] = value
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" {
                helpRequested = true
                continue
            }
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let spec = specs.first(where: { $0.flag == name }) else {
                throw CommandLineError("unknown option \(name) (see --help)")
            }
            if let inlineValue {
                values[Self.key(spec)] = inlineValue
            } else {
                guard index < arguments.count else { throw CommandLineError("\(name) needs a value") }
                values[Self.key(spec)] = arguments[index]
                index += 1
            }
        }
    }

    private static func key(_ spec: OptionSpec) -> String {
        spec.flag ?? spec.environmentVariable ?? spec.help
    }

    /// The value for a flag such as `--listen` or an env-only setting such as
    /// `DATABASE_URL`.
    public func value(_ flagOrEnvironmentVariable: String) -> String? {
        values[flagOrEnvironmentVariable]
    }

    /// The value, or an error naming the flag and variable to set.
    public func required(_ flagOrEnvironmentVariable: String) throws -> String {
        guard let value = value(flagOrEnvironmentVariable), !value.isEmpty else {
            let spec = specs.first {
                $0.flag == flagOrEnvironmentVariable || $0.environmentVariable == flagOrEnvironmentVariable
            }
            let names = [spec?.flag, spec?.environmentVariable].compactMap { $0 }.joined(separator: " / ")
            throw CommandLineError("missing required setting \(names.isEmpty ? flagOrEnvironmentVariable : names)")
        }
        return value
    }

    /// The `--help` text.
    public func helpText(program: String, summary: String, subcommands: [(String, String)] = []) -> String {
        var lines = [
            "\(program): \(summary)", "", "Usage: \(program) [options]\(subcommands.isEmpty ? "" : " [subcommand]")",
            "",
        ]
        if !subcommands.isEmpty {
            lines.append("Subcommands:")
            for (name, help) in subcommands {
                lines.append("  \(name.padding(toLength: 22, withPad: " ", startingAt: 0))\(help)")
            }
            lines.append("")
        }
        lines.append("Options (flag / environment variable, default):")
        for spec in specs {
            let names = [spec.flag.map { "\($0) VALUE" }, spec.environmentVariable].compactMap { $0 }.joined(
                separator: " / ")
            var line = "  \(names)\n      \(spec.help)"
            if spec.isSecret {
                line += " (secret)"
            } else if let defaultValue = spec.defaultValue {
                line += " [default: \(defaultValue)]"
            }
            lines.append(line)
        }
        lines.append("  --help\n      Print this help.")
        return lines.joined(separator: "\n")
    }
}
