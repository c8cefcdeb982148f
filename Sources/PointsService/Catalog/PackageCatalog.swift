import Foundation

/// The validated package catalog, loaded once at start-up from JSON
/// (PACKAGES_FILE, default config/packages.json). Credits come only from here.
public struct PackageCatalog: Sendable {
    /// Why a catalog file was refused; the service does not start with it.
    public struct LoadError: Error, Equatable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { "package catalog: \(message)" }
    }

    private struct File: Codable {
        let packages: [CreditPackage]
    }

    /// Every package, ordered by sort order.
    public let packages: [CreditPackage]
    private let byProductCode: [String: CreditPackage]

    public init(packages: [CreditPackage]) throws(LoadError) {
        try Self.validate(packages)
        self.init(validated: packages)
    }

    private init(validated packages: [CreditPackage]) {
        self.packages = packages.sorted { ($0.sortOrder, $0.productCode) < ($1.sortOrder, $1.productCode) }
        var index: [String: CreditPackage] = [:]
        for package in packages { index[package.productCode] = package }
        self.byProductCode = index
    }

    /// No packages, for operator commands that never sell (`PointsService
    /// adjust`), so they need no catalog file. A service never serves with it:
    /// loading refuses an empty catalog.
    static let none = PackageCatalog(validated: [])

    public init(jsonData: Data) throws(LoadError) {
        guard jsonData.count <= PointsLimits.catalogFileBytesMax else {
            throw LoadError(message: "file larger than 1 MiB")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: jsonData)
        } catch {
            throw LoadError(message: "not a valid catalog document: \(error)")
        }
        try self.init(packages: file.packages)
    }

    public static func load(path: String) throws(LoadError) -> PackageCatalog {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw LoadError(message: "cannot read \(path): \(error.localizedDescription)")
        }
        return try PackageCatalog(jsonData: data)
    }

    public func package(productCode: String) -> CreditPackage? { byProductCode[productCode] }

    public func package(appStoreProductId: String) -> CreditPackage? {
        packages.first { $0.appStoreProductId == appStoreProductId }
    }

    /// What a user may buy: starter packs hidden once the identity bought one.
    public func purchasable(starterPackPurchased: Bool) -> [CreditPackage] {
        starterPackPurchased ? packages.filter { $0.kind != .starter } : packages
    }

    private static func validate(_ packages: [CreditPackage]) throws(LoadError) {
        guard !packages.isEmpty, packages.count <= PointsLimits.packageCountMax else {
            throw LoadError(message: "must hold 1...\(PointsLimits.packageCountMax) packages")
        }
        var codes = Set<String>()
        var storeIds = Set<String>()
        for package in packages {
            let code = package.productCode
            do {
                _ = try PointsValidation.productCode(code)
            } catch {
                throw LoadError(message: "invalid product code \"\(code)\"")
            }
            guard codes.insert(code).inserted else { throw LoadError(message: "duplicate product code \(code)") }
            guard !package.appStoreProductId.isEmpty,
                package.appStoreProductId.utf8.count <= PointsLimits.sourceFieldBytesMax,
                storeIds.insert(package.appStoreProductId).inserted
            else {
                throw LoadError(message: "\(code): App Store product id missing or duplicated")
            }
            guard package.credits > 0, package.credits <= PointsLimits.packageCreditsMax else {
                throw LoadError(message: "\(code): credits must be 1...\(PointsLimits.packageCreditsMax)")
            }
            guard !package.displayName.isEmpty else { throw LoadError(message: "\(code): display name missing") }
            guard isDecimal(package.referencePrice) else {
                throw LoadError(message: "\(code): reference price must be decimal text")
            }
            guard package.referenceCurrency.utf8.count == 3,
                package.referenceCurrency.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A })
            else {
                throw LoadError(message: "\(code): reference currency must be an ISO 4217 code")
            }
        }
    }

    /// "0.99", "12", "7.5": digits, optionally one point and 1...2 decimals.
    private static func isDecimal(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let whole = parts.first, !whole.isEmpty, whole.count <= 9,
            whole.allSatisfy(\.isASCII), whole.allSatisfy(\.isNumber)
        else { return false }
        if parts.count == 2 {
            let fraction = parts[1]
            return (1...2).contains(fraction.count) && fraction.allSatisfy(\.isASCII) && fraction.allSatisfy(\.isNumber)
        }
        return true
    }
}
