// The driver of bench/fault/run.sh: a bounded mix of fresh purchases,
// duplicates, spends and refunds against two gateways and two PointsService
// instances while the script kills and restarts processes, then a bounded
// settle phase. Writes purchases.tsv and spends.tsv (no tokens, no signed
// data) for the script's database checks and prints one summary line per
// answer kind. Exit 1 on an unexpected answer or anything left outstanding.
//
//   FaultBench init-ca --out DIR      DIR/ca.pem (the throw-away local signing PKI) and DIR/root.der
//   FaultBench run --gateways H:P,H:P --points H:P,H:P --ca DIR/ca.pem --users FILE (uuid<TAB>token lines)
//                  --internal-ca DIR (ca.pem, <spend-caller>.pem/.key) --out DIR
//                  [--seconds 60] [--settle-seconds 90] [--workers 8] [--spend-caller spend-caller] [--mutate forget-purchase]
import AppStoreVerification
import Foundation
import RPCCore
import RPCRuntime

func initCA(_ arguments: [String]) throws {
    guard arguments.count == 2, arguments[0] == "--out" else { throw FaultUsage("init-ca --out DIR") }
    let authority = try LocalTestingCertificateAuthority()
    let directory = URL(fileURLWithPath: arguments[1])
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    // The key is written owner-only; the PKI lives for one run.
    let pemPath = directory.appendingPathComponent("ca.pem").path
    guard
        FileManager.default.createFile(
            atPath: pemPath, contents: Data(try authority.exportPEM().utf8), attributes: [.posixPermissions: 0o600])
    else {
        throw FaultUsage("cannot write \(pemPath)")
    }
    try authority.rootDER.write(to: directory.appendingPathComponent("root.der"))
}

func readUsers(_ path: String) throws -> [FaultUser] {
    let users = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line -> FaultUser in
        let parts = line.split(separator: "\t")
        guard parts.count == 2, UUID(uuidString: String(parts[0])) != nil else {
            throw FaultUsage("malformed line in \(path)")
        }
        return FaultUser(id: String(parts[0]).lowercased(), token: String(parts[1]))
    }
    guard (1...FaultLimits.usersMax).contains(users.count) else {
        throw FaultUsage("1...\(FaultLimits.usersMax) users needed")
    }
    return users
}

func run(_ arguments: [String]) async throws -> Bool {
    let options = try FaultOptions(arguments: arguments)
    let authority = try LocalTestingCertificateAuthority(
        importingPEM: try String(contentsOfFile: options.caPath, encoding: .utf8))
    let pki = options.internalCADirectory
    let tls = TLSConfiguration.client(
        trustRootsPath: pki + "/ca.pem", serverName: "points",
        certificateChainPath: pki + "/\(options.spendCaller).pem", privateKeyPath: pki + "/\(options.spendCaller).key")
    let points = try RPCClient(targets: options.points, configuration: .init(tls: tls))
    let driver = FaultDriver(
        options: options, users: try readUsers(options.usersPath),
        fixtures: SignedFixtures(authority: authority, bundleId: options.bundleId), points: points)
    let started = ContinuousClock.now
    await driver.runMix()
    let mixed = ContinuousClock.now
    let outstanding = await driver.settle()
    await points.close()
    try driver.book.write(
        to: options.outputDirectory, users: driver.users, forgetOne: options.mutation == "forget-purchase")

    print(
        "driver: \(driver.book.purchaseCount) distinct purchases; mix \(seconds(started.duration(to: mixed))) s, settle \(seconds(mixed.duration(to: .now))) s"
    )
    for (key, count) in driver.book.tally.sorted(by: { $0.key < $1.key }) { print("driver: \(key) \(count)") }
    for line in driver.book.unexpected { print("driver: UNEXPECTED \(line)") }
    if outstanding > 0 { print("driver: \(outstanding) items still outstanding after the settle phase") }
    return driver.book.unexpected.isEmpty && outstanding == 0
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "init-ca": try initCA(Array(arguments.dropFirst()))
    case "run": exit(try await run(Array(arguments.dropFirst())) ? 0 : 1)
    default:
        throw FaultUsage("usage: FaultBench init-ca --out DIR | FaultBench run ... (see bench/fault/swift/main.swift)")
    }
} catch {
    FileHandle.standardError.write(Data("FaultBench: \(error)\n".utf8))
    exit(2)
}

/// A duration as seconds with one decimal.
func seconds(_ duration: Duration) -> String {
    String(format: "%.1f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
}
