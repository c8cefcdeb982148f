/// Every Swift message type, so tests can check each against its descriptor.
public enum AllMessages {
    public static let types: [any ProtobufMessage.Type] = [
        HealthCheckRequest.self, HealthCheckResponse.self,
        EchoRequest.self, MetadataEntry.self, EchoResponse.self,
        Package.self, GetBalanceRequest.self, GetBalanceResponse.self, GetBalancesRequest.self,
        GetBalancesResponse.self,
        ListPackagesRequest.self, ListPackagesResponse.self,
        GetCatalogRequest.self, GetCatalogResponse.self, PurchaseSource.self,
        GrantRequest.self, GrantResponse.self, ClawbackRequest.self, ClawbackResponse.self,
        ReverseClawbackRequest.self, ReverseClawbackResponse.self,
        ListLedgerRequest.self, LedgerEntry.self, ListLedgerResponse.self,
        SpendRequest.self, SpendAttribution.self, SpendResponse.self, ReverseSpendRequest.self,
        ReverseSpendResponse.self,
        GetPurchaseConsumptionRequest.self, GetPurchaseConsumptionResponse.self,
        VerifyTransactionRequest.self, VerifyTransactionResponse.self, Transaction.self,
        GetTransactionRequest.self, GetTransactionResponse.self,
        HandleNotificationRequest.self, HandleNotificationResponse.self,
        GetAccountTokenRequest.self, GetAccountTokenResponse.self,
        ListTransactionsRequest.self, ListTransactionsResponse.self,
        SetConsumptionConsentRequest.self, GetConsumptionConsentRequest.self, ConsumptionConsentResponse.self,
        VerifyReceiptRequest.self, ReceiptItemResult.self, VerifyReceiptResponse.self,
    ]
}
