/// Every size and count limit of PointsService, in one place.
enum PointsLimits {
    static let eventIdBytesMax = 200
    static let bizIdBytesMax = 200
    static let sourceFieldBytesMax = 200
    static let reasonBytesMax = 100
    /// An operator adjustment's reason and the operator's name (`PointsService adjust`).
    static let adjustReasonBytesMax = 200
    static let operatorNameBytesMax = 64
    static let emailBytesMax = 320
    static let pageTokenBytesMax = 64
    /// Users one GetBalances call reads (the gateway coalesces up to this many).
    static let balancesPerCallMax = 64
    static let ledgerPageSizeDefault = 50
    static let ledgerPageSizeMax = 200
    /// Credits of one package; catalog validation enforces it.
    static let packageCreditsMax: Int64 = 1_000_000
    static let packageCountMax = 64
    static let catalogFileBytesMax = 1 << 20
    /// No balance may exceed this; guards Int64 arithmetic far from overflow.
    static let balanceMax: Int64 = 1_000_000_000_000
    /// Packs one Apple transaction may buy (GrantRequest.quantity). StoreKit
    /// itself caps a consumable purchase at 10 (SKMutablePayment.quantity,
    /// Product.PurchaseOption.quantity), so a larger value never comes from
    /// a real purchase; the cap also keeps credits x quantity far from
    /// `balanceMax` (packageCreditsMax x 10 = 10^7).
    static let quantityMax: Int32 = 10
    /// Transactions re-run after losing a race on a unique key (then it is a replay).
    static let uniqueRaceAttemptsMax = 3
    /// One spend: well below balanceMax, far above any feature's price.
    static let spendAmountMax: Int64 = 1_000_000_000
    /// A spend's biz_type ([a-z][a-z0-9_]*) and its metadata object.
    static let bizTypeBytesMax = 32
    static let spendMetadataBytesMax = 2 * 1024
    /// Digits of one number in a spend's metadata, written out with no
    /// exponent (`JSONBStorability`): an int64 id or a price fits many times.
    static let spendMetadataNumberDigitsMax = 40
}
