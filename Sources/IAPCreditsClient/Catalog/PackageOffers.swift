/// The packages the user may buy matched to StoreKit's products (docs/CLIENT.md,
/// "Wiring it into an iOS app"): the gateway's order is kept, each package gets the
/// product whose id is its `appStoreProductId`, and products StoreKit
/// returns that no package names are ignored. Pure.
public struct PackageOffers: Sendable, Hashable {
    public let offers: [PackageOffer]

    public init(offers: [PackageOffer]) { self.offers = offers }

    /// Matches `packages` (the gateway's answer) with `products` (StoreKit's).
    /// When two packages name one App Store product, only the first is kept:
    /// a purchase must map back to exactly one product code.
    public static func match(packages: [CreditPackage], products: [StoreProduct]) -> PackageOffers {
        var productsById: [String: StoreProduct] = [:]
        for product in products where productsById[product.id] == nil { productsById[product.id] = product }
        var seen = Set<String>()
        var offers: [PackageOffer] = []
        for package in packages where seen.insert(package.appStoreProductId).inserted {
            offers.append(PackageOffer(package: package, product: productsById[package.appStoreProductId]))
        }
        return PackageOffers(offers: offers)
    }

    /// The App Store ids to ask StoreKit for, once each, in display order.
    public static func productIDs(of packages: [CreditPackage]) -> [String] {
        var seen = Set<String>()
        return packages.map(\.appStoreProductId).filter { seen.insert($0).inserted }
    }

    /// The new user pack is listed only while this email identity may buy it.
    public var isStarterPackEligible: Bool { offers.contains { $0.isStarterPack } }

    public func offer(productCode: String) -> PackageOffer? {
        offers.first { $0.productCode == productCode }
    }

    /// The package code of an App Store product (mapping a transaction back).
    public func productCode(forAppStoreProductId id: String) -> String? {
        offers.first { $0.appStoreProductId == id }?.productCode
    }

    /// App Store product id → package code, for every offer.
    public var productCodesByAppStoreProductId: [String: String] {
        Dictionary(offers.map { ($0.appStoreProductId, $0.productCode) }, uniquingKeysWith: { first, _ in first })
    }
}
