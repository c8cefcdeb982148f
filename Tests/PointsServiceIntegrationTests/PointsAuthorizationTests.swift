import Contracts
import Foundation
import PostgresClient
import RPCCore
import RPCRuntime
import TestSupport
import XCTest

/// PointsService as a real process serving mutual TLS on 127.0.0.1, on the
/// real database: only PaymentsService's certificate moves money, a caller
/// without a certificate is UNAUTHENTICATED and one with another identity
/// PERMISSION_DENIED, both before any handler runs, so nothing is written.
final class PointsAuthorizationTests: XCTestCase {
    private var pki: InternalTestPKI!
    private var service: ServiceProcess!
    private var database: PostgresPool!
    private var clients: [RPCClient] = []

    override func setUp() async throws {
        pki = try await InternalTestPKI.makeOffPool(["points", "payments", "gateway", "chat", "cn-only="])
        let url = try TestDatabases.url("POINTS_DATABASE_URL")
        var environment = pki.serviceEnvironment("points")
        environment["DATABASE_URL"] = url
        environment["LOG_LEVEL"] = "info"
        environment["POINTS_SPEND_CALLERS"] = "chat"
        let settings = environment
        service = try await offPool { try ServiceProcess(executable: "PointsService", environment: settings) }
        database = PostgresPool(configuration: .init(connectionString: url, connectionsMax: 2))
    }

    override func tearDown() async throws {
        for client in clients { await client.close() }
        if let running = service {
            let status = try await offPool { running.stop() }
            XCTAssertEqual(status, 0, "graceful exit on SIGTERM")
            XCTAssertFalse(running.logs.contains("PRIVATE KEY"), "a key reached the log")
        }
        await database?.close()
        pki?.remove()
    }

    /// A client checking the server is "points" and presenting `identity` (nil: no certificate).
    private func client(_ identity: String?, issuer: InternalTestPKI? = nil) throws -> RPCClient {
        let presented: InternalTestPKI = issuer ?? pki
        let client = try RPCClient(
            targets: [HostAndPort(host: "127.0.0.1", port: service.port)],
            configuration: .init(
                tls: .client(
                    trustRootsPath: pki.caPath, serverName: "points",
                    certificateChainPath: identity.map(presented.certificatePath),
                    privateKeyPath: identity.map(presented.keyPath))))
        clients.append(client)
        return client
    }

    private func grantRequest(user: UUID) -> GrantRequest {
        var request = GrantRequest()
        request.eventId = "payment.apple_iap:\(UInt64.random(in: 1...UInt64.max))"
        request.userId = user.uuidString
        request.emailHash = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        request.productCode = "starter_pack"
        request.bizId = UUID().uuidString
        return request
    }

    /// Ledger rows and balance row of `user`, straight from the database.
    private func written(_ user: UUID) async throws -> (ledger: Int64, accounts: Int64) {
        try await database.withConnection { connection in
            let ledger = try await connection.query(
                "select count(*) as n from points_ledger where user_id = $1::uuid", [.uuid(user)])
            let accounts = try await connection.query(
                "select count(*) as n from user_points where user_id = $1::uuid", [.uuid(user)])
            return (try ledger.first!.int64("n"), try accounts.first!.int64("n"))
        }
    }

    private func code(_ body: () async throws -> Void) async -> RPCError.Code? {
        do {
            try await body()
            return .ok
        } catch let error as RPCError {
            return error.code
        } catch {
            XCTFail("unexpected \(error)")
            return nil
        }
    }

    func testOnlyPaymentsServicesCertificateGrants() async throws {
        let user = UUID()
        let request = grantRequest(user: user)
        let refused: [(String?, RPCError.Code)] = [
            (nil, .unauthenticated), ("gateway", .permissionDenied), ("chat", .permissionDenied),
            ("cn-only", .permissionDenied),
        ]
        for (identity, expected) in refused {
            let caller = try client(identity)
            let answer = await code { _ = try await caller.call(PointsMethods.grant, request, timeout: .seconds(10)) }
            XCTAssertEqual(answer, expected, identity ?? "no certificate")
            let after = try await written(user)
            XCTAssertEqual(after.ledger, 0, "a refused grant wrote a ledger row")
            XCTAssertEqual(after.accounts, 0, "a refused grant created the account")
        }
        let granted = try await client("payments").call(PointsMethods.grant, request, timeout: .seconds(10))
        XCTAssertEqual(granted.creditsAdded, 100)
        let after = try await written(user)
        XCTAssertEqual(after.ledger, 1)
        let logs = service.logs
        XCTAssertTrue(
            logs.contains("\"caller refused\"") && logs.contains("\"caller\":\"gateway\""), String(logs.suffix(2000)))
    }

    func testClawbackMovesOnlyForPaymentsService() async throws {
        let user = UUID()
        let grant = grantRequest(user: user)
        _ = try await client("payments").call(PointsMethods.grant, grant, timeout: .seconds(10))
        var clawback = ClawbackRequest()
        clawback.eventId = "refund.apple_iap:\(UInt64.random(in: 1...UInt64.max))"
        clawback.userId = user.uuidString
        clawback.originalEventId = grant.eventId
        clawback.bizId = grant.bizId
        clawback.reason = "refund"
        let gatewayAnswer = await code {
            _ = try await self.client("gateway").call(PointsMethods.clawback, clawback, timeout: .seconds(10))
        }
        XCTAssertEqual(gatewayAnswer, .permissionDenied)
        let unchanged = try await written(user)
        XCTAssertEqual(unchanged.ledger, 1)
        let taken = try await client("payments").call(PointsMethods.clawback, clawback, timeout: .seconds(10))
        XCTAssertEqual(taken.creditsDeducted, 100)
    }

    func testReadsAreTheGatewaysAndHealthIsOpen() async throws {
        var balance = GetBalanceRequest()
        balance.userId = UUID().uuidString
        for identity in ["gateway", "payments"] {
            let answer = try await client(identity).call(PointsMethods.getBalance, balance, timeout: .seconds(10))
            XCTAssertEqual(answer.balance, 0, identity)
        }
        var ledger = ListLedgerRequest()
        ledger.userId = balance.userId
        let gatewayLedger = await code {
            _ = try await self.client("gateway").call(PointsMethods.listLedger, ledger, timeout: .seconds(10))
        }
        XCTAssertEqual(gatewayLedger, .ok)
        let paymentsLedger = await code {
            _ = try await self.client("payments").call(PointsMethods.listLedger, ledger, timeout: .seconds(10))
        }
        XCTAssertEqual(paymentsLedger, .permissionDenied)
        var balances = GetBalancesRequest()
        balances.userIds = [balance.userId]
        let gatewayBalances = await code {
            _ = try await self.client("gateway").call(PointsMethods.getBalances, balances, timeout: .seconds(10))
        }
        XCTAssertEqual(gatewayBalances, .ok)
        let paymentsBalances = await code {
            _ = try await self.client("payments").call(PointsMethods.getBalances, balances, timeout: .seconds(10))
        }
        XCTAssertEqual(paymentsBalances, .permissionDenied)
        let chatBalance = await code {
            _ = try await self.client("chat").call(PointsMethods.getBalance, balance, timeout: .seconds(10))
        }
        XCTAssertEqual(chatBalance, .permissionDenied)
        let anonymousBalance = await code {
            _ = try await self.client(nil).call(PointsMethods.getBalance, balance, timeout: .seconds(10))
        }
        XCTAssertEqual(anonymousBalance, .unauthenticated)
        let health = try await client(nil).call(HealthMethods.check, HealthCheckRequest(), timeout: .seconds(10))
        XCTAssertEqual(health.status, .serving)
    }

    func testACertificateOfAnotherCAIsRefusedInTheHandshake() async throws {
        let stranger = try await InternalTestPKI.makeOffPool(["payments"])
        defer { stranger.remove() }
        let user = UUID()
        let answer = await code {
            _ = try await self.client("payments", issuer: stranger).call(
                PointsMethods.grant, self.grantRequest(user: user), timeout: .seconds(10))
        }
        XCTAssertEqual(answer, .unavailable)
        let after = try await written(user)
        XCTAssertEqual(after.ledger, 0)
        // A plaintext caller gets no answer at all.
        let plain = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: service.port)])
        clients.append(plain)
        let plainAnswer = await code {
            _ = try await plain.call(PointsMethods.grant, self.grantRequest(user: user), timeout: .seconds(5))
        }
        XCTAssertNotEqual(plainAnswer, .ok)
    }
}

/// Start-up: mutual TLS unless explicitly off, and off only on loopback.
final class PointsInternalAuthStartupTests: XCTestCase {
    private func startFailure(_ environment: [String: String], arguments: [String] = []) async throws -> String {
        var settings = environment
        settings["DATABASE_URL"] = try TestDatabases.url("POINTS_DATABASE_URL")
        let captured = settings
        return try await offPool { () -> String in
            do {
                let started = try ServiceProcess(
                    executable: "PointsService", arguments: arguments, environment: captured, startTimeout: .seconds(30)
                )
                started.stop()
                return "started"
            } catch {
                return "\(error)"
            }
        }
    }

    func testWithoutCertificatesItRefusesToStart() async throws {
        let message = try await startFailure([:])
        for setting in [
            "TLS_CERT (--tls-cert) must be set", "TLS_KEY (--tls-key) must be set",
            "TLS_CLIENT_CA (--tls-client-ca) must be set",
        ] {
            XCTAssertTrue(
                message.contains("PointsService: \(setting): under INTERNAL_AUTH=mtls (the default)"), message)
        }
    }

    func testCleartextIsRefusedOffLoopback() async throws {
        let message = try await startFailure(["INTERNAL_AUTH": "off"], arguments: ["--listen", "0.0.0.0:0"])
        XCTAssertTrue(
            message.contains(
                "INTERNAL_AUTH (--internal-auth) must be mtls to listen on 0.0.0.0:0: "
                    + "INTERNAL_AUTH=off serves without caller authentication"), message)
    }
}
