/// A message that can travel in a gRPC call. Contracts' protobuf types adopt it.
public protocol RPCMessage: Sendable {
    init(serializedBytes: [UInt8]) throws
    func serializedBytes() throws -> [UInt8]
}
