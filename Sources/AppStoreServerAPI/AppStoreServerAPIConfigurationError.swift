/// A setting the client cannot use, named by its environment variable (or
/// configuration field), with the reason. Never carries key material.
public struct AppStoreServerAPIConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `APPLE_API_KEY_PATH`, `APPLE_API_KEY_ID`, ... or a field name.
    public var setting: String
    public var reason: String

    public init(setting: String, reason: String) {
        self.setting = setting
        self.reason = reason
    }

    public var description: String { "\(setting): \(reason)" }
}
