// Swift faces of Protos/grpc/health/v1/health.proto. One property per proto
// field (camelCase of the field name); ContractsTests checks them.

/// `grpc.health.v1.HealthCheckRequest`.
public struct HealthCheckRequest: ProtobufMessage, Equatable {
    public static let protobufName = "grpc.health.v1.HealthCheckRequest"
    public var service = ""
    public init() {}
    public init(service: String) { self.service = service }
}

/// `grpc.health.v1.HealthCheckResponse`.
public struct HealthCheckResponse: ProtobufMessage, Equatable {
    public static let protobufName = "grpc.health.v1.HealthCheckResponse"

    /// `grpc.health.v1.HealthCheckResponse.ServingStatus`.
    public struct ServingStatus: ProtobufEnum {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let unknown = Self(rawValue: 0)
        public static let serving = Self(rawValue: 1)
        public static let notServing = Self(rawValue: 2)
        public static let serviceUnknown = Self(rawValue: 3)
    }

    public var status = ServingStatus.unknown
    public init() {}
    public init(status: ServingStatus) { self.status = status }
}
