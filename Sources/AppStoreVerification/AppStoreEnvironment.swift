/// The App Store environment a payload claims (`environment`, `receiptType`).
/// Unknown values are kept, never rejected at decode time.
public struct AppStoreEnvironment: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let production = AppStoreEnvironment(rawValue: "Production")
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    /// StoreKit testing in Xcode; accepted only in local-testing mode.
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    /// Apple's local testing environment; accepted only in local-testing mode.
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")

    /// Environments whose data Apple does not sign with its production PKI.
    public var isLocal: Bool { self == .xcode || self == .localTesting }
    public var description: String { rawValue }
}
