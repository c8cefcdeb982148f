import HTTPServer

/// Turns a parsed HTTP request into a `GatewayCommand` or the problem to
/// answer, in a fixed order: route (404/405), bearer token (401), media
/// type (415), body (400/413/422), path parameters (422). Pure: the clock
/// is an argument.
public struct RequestPreparer: Sendable {
    public let router: RouteTable
    public let verifier: JWTVerifier

    public init(router: RouteTable = RouteTable(), verifier: JWTVerifier) {
        self.router = router
        self.verifier = verifier
    }

    public func prepare(_ request: HTTPRequest, nowSeconds: Int64) -> Result<GatewayCommand, Problem> {
        prepareRouted(request, nowSeconds: nowSeconds).result
    }

    /// `prepare`, with the pattern of the route the request concerns (nil
    /// when none fits) for the metrics, from the same one table lookup.
    public func prepareRouted(_ request: HTTPRequest, nowSeconds: Int64) -> (
        result: Result<GatewayCommand, Problem>, route: String?
    ) {
        prepareRouted(
            request, resolved: router.resolve(method: request.method, target: request.target), nowSeconds: nowSeconds)
    }

    /// The same, for a request whose route `router.resolve` already gave
    /// (the application resolves first, to admit or refuse the request).
    public func prepareRouted(
        _ request: HTTPRequest, resolved: (match: RouteMatch, pattern: String?), nowSeconds: Int64
    ) -> (result: Result<GatewayCommand, Problem>, route: String?) {
        do {
            return (
                .success(try command(for: request, match: resolved.match, nowSeconds: nowSeconds)), resolved.pattern
            )
        } catch {
            return (.failure(Problem(rendering: error, instance: String(request.path))), resolved.pattern)
        }
    }

    /// The problem `prepareRouted` answers from the head alone (the route,
    /// then the bearer token), or nil when the rest of the request decides:
    /// the server asks before it reads a body (`HTTPResponder.refuseBeforeBody`).
    public func screen(_ head: HTTPRequestHead, match: RouteMatch, nowSeconds: Int64) -> Problem? {
        do {
            _ = try routeAndUser(match: match, headers: head.headers, nowSeconds: nowSeconds)
            return nil
        } catch {
            return Problem(rendering: error, instance: String(head.path))
        }
    }

    /// The route matched and, where it needs one, the user of the bearer token.
    private func routeAndUser(
        match: RouteMatch, headers: HTTPHeaders, nowSeconds: Int64
    ) throws(Problem) -> (route: Route, user: AuthenticatedUser?) {
        guard case .matched(let route, let requiresAuthentication) = match else {
            throw match.problem ?? Problem(.notFound)
        }
        guard requiresAuthentication else { return (route, nil) }
        do {
            return (route, try verifier.authenticate(headers: headers, nowSeconds: nowSeconds))
        } catch {
            throw error.problem
        }
    }

    private func command(for request: HTTPRequest, match: RouteMatch, nowSeconds: Int64) throws(Problem)
        -> GatewayCommand
    {
        let (route, user) = try routeAndUser(match: match, headers: request.headers, nowSeconds: nowSeconds)
        if request.method == "GET" && !request.body.isEmpty {
            throw Problem(.validationFailedMalformed, detail: "GET requests take no body.")
        }
        do {
            return try command(route: route, user: user, request: request)
        } catch {
            throw error.problem
        }
    }

    private func command(route: Route, user: AuthenticatedUser?, request: HTTPRequest) throws(ValidationError)
        -> GatewayCommand
    {
        // Authenticated routes always have a user here; the table says which.
        func authenticated() -> AuthenticatedUser {
            guard let user else { preconditionFailure("route requires authentication but no user was verified") }
            return user
        }
        switch route {
        case .balance: return .getBalance(authenticated())
        case .packages: return .listPackages(authenticated())
        case .ledger:
            return .listLedger(
                authenticated(), try PageQuery.parse(request.query, sizeMax: GatewayLimits.ledgerPageSizeMax))
        case .transactions:
            return .listTransactions(
                authenticated(), try PageQuery.parse(request.query, sizeMax: GatewayLimits.transactionPageSizeMax))
        case .accountToken: return .getAccountToken(authenticated())
        case .consumptionConsent: return .getConsumptionConsent(authenticated())
        case .setConsumptionConsent:
            try requireJSON(request)
            return .setConsumptionConsent(authenticated(), try ConsumptionConsentRequestBody(jsonBody: request.body))
        case .health: return .health
        case .readiness: return .readiness
        case .transactionStatus(let transactionId):
            return .getTransaction(authenticated(), transactionId: try RequestFieldRules.transactionId(transactionId))
        case .verifyTransaction:
            try requireJSON(request)
            return .verifyTransaction(authenticated(), try VerifyTransactionRequestBody(jsonBody: request.body))
        case .verifyReceipt:
            try requireJSON(request)
            return .verifyReceipt(authenticated(), try VerifyReceiptRequestBody(jsonBody: request.body))
        case .appleNotifications:
            try requireJSON(request)
            return .handleNotification(try NotificationRequestBody(jsonBody: request.body))
        }
    }

    private func requireJSON(_ request: HTTPRequest) throws(ValidationError) {
        do {
            try ContentTypeRule.requireJSON(request.headers)
        } catch {
            throw ValidationError(field: nil, reason: .unsupportedMediaType)
        }
    }
}
