/// What a pagination helper collected: the items of every page read, the
/// token to continue from (the last `revision` / `paginationToken`), and
/// whether the history was read to its end (`isComplete`) or the helper
/// stopped at its page bound (then resume with `nextToken`).
public struct PagedResult<Item: Sendable & Equatable>: Sendable, Equatable {
    public var items: [Item]
    public var nextToken: String?
    public var pageCount: Int
    public var isComplete: Bool
}
