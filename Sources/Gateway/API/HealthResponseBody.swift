import StrictJSON

/// GET /healthz and /readyz: "ok" when healthy (or ready); the route decides
/// the status code (200 or 503).
public struct HealthResponseBody: JSONResponseBody, Equatable {
    public let status: String

    public init(status: String) { self.status = status }

    public var json: JSONValue { .object(JSONObject(["status": .string(status)])) }
}
