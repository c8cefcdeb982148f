/// Which App Store server a call goes to. A transaction id belongs to one
/// environment; `AppStoreServerAPIClient.productionThenSandbox` looks in
/// production first, as Apple recommends.
public enum AppStoreServerEnvironment: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case production = "Production"
    case sandbox = "Sandbox"

    public var description: String { rawValue }

    /// Apple's recommended base URL since May 2026 (App Store Server API
    /// changelog, "Server update — 2026/05/05": api.storekit.apple.com and
    /// api.storekit-sandbox.apple.com replace the *.itunes.apple.com hosts,
    /// which keep working).
    public var defaultBaseURL: String {
        switch self {
        case .production: "https://api.storekit.apple.com"
        case .sandbox: "https://api.storekit-sandbox.apple.com"
        }
    }
}
