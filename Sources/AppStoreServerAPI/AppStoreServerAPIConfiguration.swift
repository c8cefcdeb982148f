/// Everything an `AppStoreServerAPIClient` needs, injectable (no globals):
/// credentials, the two base URLs, the trust roots and the limits.
public struct AppStoreServerAPIConfiguration: Sendable {
    public var credentials: AppStoreAPICredentials
    /// `https://host[:port]`; defaults to Apple's recommended hosts.
    public var productionURL: String
    public var sandboxURL: String
    /// A PEM CA bundle the server must chain to; nil uses the system trust store.
    public var trustRootsPath: String?
    /// Dial this address (an IP literal) instead of resolving the URL's
    /// host; TLS still checks the URL's host name. For tests against a
    /// local stand-in whose certificate names a host that does not resolve.
    public var connectAddressOverride: String?
    public var limits: AppStoreServerAPILimits
    /// Receives one event per attempt, retry and outcome (method, path,
    /// status, Apple's error code); never a token or key. Nil: no events.
    public var eventSink: (@Sendable (AppStoreServerAPIEvent) -> Void)?

    public init(
        credentials: AppStoreAPICredentials,
        productionURL: String = AppStoreServerEnvironment.production.defaultBaseURL,
        sandboxURL: String = AppStoreServerEnvironment.sandbox.defaultBaseURL,
        trustRootsPath: String? = nil, connectAddressOverride: String? = nil,
        limits: AppStoreServerAPILimits = .default,
        eventSink: (@Sendable (AppStoreServerAPIEvent) -> Void)? = nil
    ) {
        self.credentials = credentials
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.trustRootsPath = trustRootsPath
        self.connectAddressOverride = connectAddressOverride
        self.limits = limits
        self.eventSink = eventSink
    }

    /// The operator settings, by environment variable.
    public enum Variable {
        public static let keyPath = "APPLE_API_KEY_PATH"
        public static let keyID = "APPLE_API_KEY_ID"
        public static let issuerID = "APPLE_API_ISSUER_ID"
        public static let bundleID = "APPLE_BUNDLE_ID"
        public static let productionURL = "APPLE_API_PRODUCTION_URL"
        public static let sandboxURL = "APPLE_API_SANDBOX_URL"
        public static let caPath = "APPLE_API_CA_PATH"
    }

    /// Reads the settings from `environment` (pass
    /// `ProcessInfo.processInfo.environment`): the three key settings and
    /// `APPLE_BUNDLE_ID` are required; the URLs and CA path are optional.
    /// Reads the key file: call it at start-up, not on the cooperative pool.
    public static func fromEnvironment(_ environment: [String: String]) throws(AppStoreServerAPIConfigurationError)
        -> AppStoreServerAPIConfiguration
    {
        func required(_ name: String) throws(AppStoreServerAPIConfigurationError) -> String {
            guard let value = environment[name], !value.isEmpty else {
                throw .init(setting: name, reason: "is not set")
            }
            return value
        }
        let credentials = try AppStoreAPICredentials.load(
            keyPath: try required(Variable.keyPath), keyID: try required(Variable.keyID),
            issuerID: try required(Variable.issuerID), bundleID: try required(Variable.bundleID))
        var configuration = AppStoreServerAPIConfiguration(credentials: credentials)
        if let url = environment[Variable.productionURL], !url.isEmpty { configuration.productionURL = url }
        if let url = environment[Variable.sandboxURL], !url.isEmpty { configuration.sandboxURL = url }
        if let path = environment[Variable.caPath], !path.isEmpty { configuration.trustRootsPath = path }
        try configuration.validate()
        return configuration
    }

    /// The URL of `environment`, parsed.
    func baseURL(_ environment: AppStoreServerEnvironment) throws(AppStoreServerAPIConfigurationError) -> BaseURL {
        switch environment {
        case .production: try BaseURL(parsing: productionURL, setting: Variable.productionURL)
        case .sandbox: try BaseURL(parsing: sandboxURL, setting: Variable.sandboxURL)
        }
    }

    func validate() throws(AppStoreServerAPIConfigurationError) {
        try credentials.validate()
        try limits.validate()
        for environment in AppStoreServerEnvironment.allCases { _ = try baseURL(environment) }
    }
}
