/// The packages one identity may buy.
public struct PackageListing: Sendable, Equatable {
    public let packages: [CreditPackage]
    public let starterPackPurchased: Bool
}
