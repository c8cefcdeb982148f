/// One missing or wrong setting found at start-up: the setting (its
/// environment variable, or its flag when it has none), what it must be and
/// why. Its description is the sentence an operator reads, such as
/// `EMAIL_HASH_SECRET must be at least 32 bytes: it keys the email hash that
/// links starter-pack claims`. It never carries a setting's value when that
/// value may be a secret.
public struct SettingProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// The environment variable (or flag) at fault; also what orders problems.
    public var setting: String
    /// The setting's flag, shown next to the variable (filled in by `SettingsCollector`).
    public var flag: String?
    /// What the value must be, as the rest of a sentence: "must be set", "must be 1...200".
    public var requirement: String
    /// Why the service needs it so.
    public var reason: String

    public init(_ setting: String, _ requirement: String, because reason: String) {
        precondition(
            !setting.isEmpty && !requirement.isEmpty && !reason.isEmpty,
            "a problem names a setting, a requirement and a reason")
        self.setting = setting
        self.requirement = requirement
        self.reason = reason
    }

    /// `setting` is not set but is required.
    public static func missing(_ setting: String, because reason: String) -> SettingProblem {
        SettingProblem(setting, "must be set", because: reason)
    }

    public var description: String {
        let name = flag.map { "\(setting) (\($0))" } ?? setting
        return "\(name) \(requirement): \(reason)"
    }
}
