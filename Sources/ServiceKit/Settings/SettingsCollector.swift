/// Reads a service's settings and keeps every problem instead of stopping at
/// the first: each reading either returns a value or records why it cannot,
/// and `finish()` throws them all together. Readings that depend on a bad
/// value are skipped rather than reported twice.
public struct SettingsCollector: Sendable {
    public let options: CommandLineOptions
    public private(set) var problems: [SettingProblem] = []

    public init(_ options: CommandLineOptions) {
        self.options = options
    }

    /// Records `problem` once (two readings may find the same one).
    public mutating func report(_ problem: SettingProblem) {
        var problem = problem
        if problem.flag == nil, let spec = spec(problem.setting), let flag = spec.flag,
            spec.environmentVariable == problem.setting
        {
            problem.flag = flag
        }
        if !problems.contains(problem) { problems.append(problem) }
    }

    /// Runs a reading that can fail with one problem; nil when it did.
    public mutating func read<T>(_ body: () throws(SettingProblem) -> T) -> T? {
        do {
            return try body()
        } catch {
            report(error)
            return nil
        }
    }

    /// Runs a reading that can fail with several problems; nil when it did.
    public mutating func readAll<T>(_ body: () throws(SettingsError) -> T) -> T? {
        do {
            return try body()
        } catch {
            for problem in error.problems { report(problem) }
            return nil
        }
    }

    /// The value of `setting` (variable or flag), nil when unset or empty.
    public func value(_ setting: String) -> String? {
        guard let value = options.value(key(setting)), !value.isEmpty else { return nil }
        return value
    }

    /// The value, or a problem saying it must be set and why.
    public mutating func required(_ setting: String, because reason: String) -> String? {
        guard let value = value(setting) else {
            report(.missing(name(setting), because: reason))
            return nil
        }
        return value
    }

    /// A whole number in `range`, or a problem naming the range and why.
    public mutating func integer(
        _ setting: String, in range: ClosedRange<Int64>, unit: String = "", because reason: String
    ) -> Int64? {
        guard let text = required(setting, because: reason) else { return nil }
        guard let number = Int64(text.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
            let suffix = unit.isEmpty ? "" : " \(unit)"
            report(
                SettingProblem(
                    name(setting), "must be a whole number\(suffix) in \(range.lowerBound)...\(range.upperBound)",
                    because: reason))
            return nil
        }
        return number
    }

    /// One of `choices` (case-insensitive), or a problem listing them.
    public mutating func choice<T>(_ setting: String, _ choices: KeyValuePairs<String, T>, because reason: String) -> T?
    {
        guard let text = required(setting, because: reason) else { return nil }
        guard let match = choices.first(where: { $0.key == text.lowercased() }) else {
            report(
                SettingProblem(
                    name(setting), "must be one of \(choices.map(\.key).joined(separator: ", "))", because: reason))
            return nil
        }
        return match.value
    }

    /// Reads with `read` on a fresh collector over `options`, then finishes:
    /// the value, or every problem it reported as one `SettingsError`.
    public static func reading<Value>(
        _ options: CommandLineOptions, _ read: (inout SettingsCollector) -> Value?
    ) throws(SettingsError) -> Value {
        var settings = SettingsCollector(options)
        let value = read(&settings)
        try settings.finish()
        guard let value else { preconditionFailure("an unread setting is a reported problem") }
        return value
    }

    /// Every problem so far, or nothing when there is none.
    public func finish() throws(SettingsError) {
        guard !problems.isEmpty else { return }
        throw SettingsError(ordered)
    }

    /// The problems in the order `--help` lists their settings (settings it
    /// does not list last), in reading order within one setting.
    public var ordered: [SettingProblem] {
        let position = { (problem: SettingProblem) -> Int in
            options.specs.firstIndex { $0.environmentVariable == problem.setting || $0.flag == problem.setting }
                ?? options.specs.count
        }
        return problems.enumerated()
            .sorted { (position($0.element), $0.offset) < (position($1.element), $1.offset) }
            .map(\.element)
    }

    /// The name a problem shows for `setting`: the variable when the setting has one.
    public func name(_ setting: String) -> String {
        guard let spec = spec(setting) else { return setting }
        return spec.environmentVariable ?? spec.flag ?? setting
    }

    /// The key `CommandLineOptions` stores `setting` under (its flag, else its variable).
    private func key(_ setting: String) -> String {
        guard let spec = spec(setting) else { return setting }
        return spec.flag ?? spec.environmentVariable ?? setting
    }

    private func spec(_ setting: String) -> OptionSpec? {
        options.specs.first { $0.environmentVariable == setting || $0.flag == setting }
    }
}
