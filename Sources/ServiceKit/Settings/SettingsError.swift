/// Every problem found in a service's settings, in the order `--help` lists
/// the settings: start-up refuses all of them at once (exit status 2), one
/// sentence per problem.
public struct SettingsError: Error, Sendable, CustomStringConvertible {
    public var problems: [SettingProblem]

    public init(_ problems: [SettingProblem]) {
        precondition(!problems.isEmpty, "a settings error has at least one problem")
        self.problems = problems
    }

    /// One sentence per problem.
    public var sentences: [String] { problems.map(\.description) }

    public var description: String { sentences.joined(separator: "\n") }

    /// What a process prints before it exits with status 2: one line per
    /// problem, each starting with the program's name.
    public func report(program: String) -> String {
        sentences.map { "\(program): \($0)\n" }.joined()
    }
}
