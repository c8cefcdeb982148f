/// `inAppOwnershipType`: purchased by this user or shared via Family Sharing.
public struct InAppOwnershipType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")
}
