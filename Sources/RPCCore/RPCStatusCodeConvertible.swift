/// A domain failure that names the gRPC status code it travels as.
///
/// Services' domain errors adopt it so that the code lives next to the
/// failure, in `RPCError.Code`'s vocabulary, and no service keeps a table of
/// numbers of its own. The service's inbound edge (`Server/`) adds what the
/// wire needs beside the code (the stable reason trailer) and builds the
/// `RPCError`.
public protocol RPCStatusCodeConvertible: Error {
    /// The status this failure is answered with.
    var rpcStatusCode: RPCError.Code { get }
}
