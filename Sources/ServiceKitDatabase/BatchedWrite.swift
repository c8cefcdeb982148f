import PostgresClient

/// A write that concurrent callers can share one statement and one commit
/// for (`CommitBatcher`): the statement that carries a batch, and the rows
/// each item writes (`BatchQueue` never puts two items that share one
/// in a batch).
///
/// `execute` is all or nothing: it returns one outcome per item, in the
/// items' order, or throws having written nothing (or, for a connection
/// lost at commit, possibly everything); every item of a failed batch is
/// then run alone by its caller, on the path it took before batching.
public protocol BatchedWrite {
    associatedtype Item: Sendable
    associatedtype Outcome: Sendable

    /// The rows `item` writes (an account id, an event id, a transaction id...).
    static func keys(_ item: Item) -> [String]

    /// Runs the batch as one autocommitted statement.
    static func execute(_ items: [Item], on connection: PostgresConnection) async throws -> [Outcome]

    /// The fault injection point hit just before the statement (tests kill
    /// the process there: dying before the commit), if any.
    static var beforeCommitFault: String? { get }
}
