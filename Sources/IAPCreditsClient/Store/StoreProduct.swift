import Foundation

/// An App Store product as the store describes it: what the user pays,
/// already localized (StoreKit's `Product.displayPrice`).
public struct StoreProduct: Sendable, Hashable {
    /// The App Store product id.
    public let id: String
    public let displayName: String
    /// The localized price text, e.g. "¥12.00" or "$1.99": shown instead of the backend's reference price.
    public let displayPrice: String
    public let price: Decimal
    public let currencyCode: String?

    public init(id: String, displayName: String, displayPrice: String, price: Decimal, currencyCode: String?) {
        self.id = id
        self.displayName = displayName
        self.displayPrice = displayPrice
        self.price = price
        self.currencyCode = currencyCode
    }
}
