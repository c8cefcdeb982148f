/// `--name value` pairs after the subcommand, with environment fallbacks.
struct DemoArguments {
    let subcommand: String?
    private var values: [String: String] = [:]
    private let environment: [String: String]

    init(_ arguments: [String], environment: [String: String]) throws {
        self.environment = environment
        subcommand = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 }
        var index = subcommand == nil ? 0 : 1
        while index < arguments.count {
            let flag = arguments[index]
            if flag == "--help" || flag == "-h" {
                values["--help"] = "1"
                index += 1
                continue
            }
            guard flag.hasPrefix("--"), index + 1 < arguments.count else {
                throw WalkthroughFailure(description: "expected --flag value at \(flag)")
            }
            values[flag] = arguments[index + 1]
            index += 2
        }
    }

    var helpRequested: Bool { values["--help"] != nil }

    /// The flag's value, else the variable's, else the default.
    func value(_ flag: String, env: String? = nil, default fallback: String? = nil) -> String? {
        if let value = values[flag] { return value }
        if let env, let value = environment[env], !value.isEmpty { return value }
        return fallback
    }

    func required(_ flag: String, env: String? = nil) throws -> String {
        guard let value = value(flag, env: env), !value.isEmpty else {
            throw WalkthroughFailure(description: "\(flag)\(env.map { " (or \($0))" } ?? "") is required")
        }
        return value
    }
}
