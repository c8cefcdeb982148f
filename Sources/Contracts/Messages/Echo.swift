// Swift faces of Protos/testing/v1/echo.proto (interop tests and benchmark).

/// `testing.v1.EchoRequest`.
public struct EchoRequest: ProtobufMessage, Equatable {
    public static let protobufName = "testing.v1.EchoRequest"
    public var message = ""
    public var payload: [UInt8] = []
    public var failWithCode: Int32 = 0
    public var failWithMessage = ""
    public var delayMs: Int64 = 0
    public var echoMetadataKeys: [String] = []
    public init() {}
}

/// `testing.v1.MetadataEntry`.
public struct MetadataEntry: ProtobufMessage, Equatable {
    public static let protobufName = "testing.v1.MetadataEntry"
    public var key = ""
    public var value = ""
    public init() {}
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// `testing.v1.EchoResponse`.
public struct EchoResponse: ProtobufMessage, Equatable {
    public static let protobufName = "testing.v1.EchoResponse"
    public var message = ""
    public var payload: [UInt8] = []
    public var deadlineRemainingMs: Int64 = 0
    public var metadata: [MetadataEntry] = []
    public init() {}
}
