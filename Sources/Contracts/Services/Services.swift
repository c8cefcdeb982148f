// The unary methods of every service in Protos/. ContractsTests checks this
// list against protoc-c's service descriptors, method by method.

/// `grpc.health.v1.Health` (Watch, a streaming method, is not served).
public enum HealthMethods {
    public static let service = "grpc.health.v1.Health"
    public static let check = UnaryMethod<HealthCheckRequest, HealthCheckResponse>(service: service, method: "Check")
    public static let all: [MethodSignature] = [check.signature]
}

/// `points.v1.Points`.
public enum PointsMethods {
    public static let service = "points.v1.Points"
    public static let getBalance = UnaryMethod<GetBalanceRequest, GetBalanceResponse>(
        service: service, method: "GetBalance")
    public static let getBalances = UnaryMethod<GetBalancesRequest, GetBalancesResponse>(
        service: service, method: "GetBalances")
    public static let listPackages = UnaryMethod<ListPackagesRequest, ListPackagesResponse>(
        service: service, method: "ListPackages")
    public static let getCatalog = UnaryMethod<GetCatalogRequest, GetCatalogResponse>(
        service: service, method: "GetCatalog")
    public static let grant = UnaryMethod<GrantRequest, GrantResponse>(service: service, method: "Grant")
    public static let clawback = UnaryMethod<ClawbackRequest, ClawbackResponse>(service: service, method: "Clawback")
    public static let reverseClawback = UnaryMethod<ReverseClawbackRequest, ReverseClawbackResponse>(
        service: service, method: "ReverseClawback")
    public static let listLedger = UnaryMethod<ListLedgerRequest, ListLedgerResponse>(
        service: service, method: "ListLedger")
    public static let spend = UnaryMethod<SpendRequest, SpendResponse>(service: service, method: "Spend")
    public static let reverseSpend = UnaryMethod<ReverseSpendRequest, ReverseSpendResponse>(
        service: service, method: "ReverseSpend")
    public static let getPurchaseConsumption = UnaryMethod<
        GetPurchaseConsumptionRequest, GetPurchaseConsumptionResponse
    >(
        service: service, method: "GetPurchaseConsumption")
    public static let all: [MethodSignature] = [
        getBalance.signature, getBalances.signature, listPackages.signature, getCatalog.signature, grant.signature,
        clawback.signature, reverseClawback.signature, listLedger.signature, spend.signature, reverseSpend.signature,
        getPurchaseConsumption.signature,
    ]
}

/// `payments.v1.Payments`.
public enum PaymentsMethods {
    public static let service = "payments.v1.Payments"
    public static let verifyTransaction = UnaryMethod<VerifyTransactionRequest, VerifyTransactionResponse>(
        service: service, method: "VerifyTransaction")
    public static let getTransaction = UnaryMethod<GetTransactionRequest, GetTransactionResponse>(
        service: service, method: "GetTransaction")
    public static let handleNotification = UnaryMethod<HandleNotificationRequest, HandleNotificationResponse>(
        service: service, method: "HandleNotification")
    public static let getAccountToken = UnaryMethod<GetAccountTokenRequest, GetAccountTokenResponse>(
        service: service, method: "GetAccountToken")
    public static let listTransactions = UnaryMethod<ListTransactionsRequest, ListTransactionsResponse>(
        service: service, method: "ListTransactions")
    public static let setConsumptionConsent = UnaryMethod<SetConsumptionConsentRequest, ConsumptionConsentResponse>(
        service: service, method: "SetConsumptionConsent")
    public static let getConsumptionConsent = UnaryMethod<GetConsumptionConsentRequest, ConsumptionConsentResponse>(
        service: service, method: "GetConsumptionConsent")
    public static let verifyReceipt = UnaryMethod<VerifyReceiptRequest, VerifyReceiptResponse>(
        service: service, method: "VerifyReceipt")
    public static let all: [MethodSignature] = [
        verifyTransaction.signature, getTransaction.signature, handleNotification.signature, getAccountToken.signature,
        listTransactions.signature, setConsumptionConsent.signature, getConsumptionConsent.signature,
        verifyReceipt.signature,
    ]
}

/// `testing.v1.Echo` (interop tests and the benchmark).
public enum EchoMethods {
    public static let service = "testing.v1.Echo"
    public static let unary = UnaryMethod<EchoRequest, EchoResponse>(service: service, method: "Unary")
    public static let all: [MethodSignature] = [unary.signature]
}

/// Every unary method this build knows.
public enum AllMethods {
    public static let signatures: [MethodSignature] =
        HealthMethods.all + PointsMethods.all + PaymentsMethods.all + EchoMethods.all
}
