import Contracts
import StrictJSON

/// GET and PUT /api/v1/payments/apple/consumption-consent: the stored
/// consent; `recorded` is false while the user never said (consented is
/// then false: no consent is assumed).
public struct ConsumptionConsentResponseBody: JSONResponseBody, Equatable {
    public let consented: Bool
    public let recorded: Bool

    public init(consented: Bool, recorded: Bool) {
        self.consented = consented
        self.recorded = recorded
    }

    init(_ response: ConsumptionConsentResponse) {
        self.init(consented: response.consented && response.recorded, recorded: response.recorded)
    }

    public var json: JSONValue {
        .object(JSONObject(["consented": .bool(consented), "recorded": .bool(recorded)]))
    }
}
