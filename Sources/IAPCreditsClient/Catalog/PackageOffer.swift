/// A package as the app shows it: the backend's package with StoreKit's
/// product. Only a package StoreKit sells can be bought; its price text is
/// StoreKit's localized one.
public struct PackageOffer: Sendable, Hashable {
    public let package: CreditPackage
    /// StoreKit's product for `package.appStoreProductId`; nil when the App
    /// Store does not sell it right now (show the card disabled).
    public let product: StoreProduct?

    public init(package: CreditPackage, product: StoreProduct?) {
        self.package = package
        self.product = product
    }

    public var productCode: String { package.productCode }
    public var appStoreProductId: String { package.appStoreProductId }
    public var isAvailable: Bool { product != nil }
    /// The price to show: StoreKit's, never the backend's reference price.
    public var displayPrice: String? { product?.displayPrice }
    public var isStarterPack: Bool { package.kind == .starter }
}
