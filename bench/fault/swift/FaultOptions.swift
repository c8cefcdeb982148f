import Foundation
import RPCCore
import RPCRuntime

/// The driver's command line, every count and time bounded (`FaultLimits`).
struct FaultOptions {
    var gateways: [HostAndPort] = []
    var points: [HostAndPort] = []
    var caPath = ""
    var usersPath = ""
    var internalCADirectory = ""
    var spendCaller = "spend-caller"
    var outputDirectory = ""
    var seconds = 60
    var settleSeconds = 90
    var workers = 8
    var bundleId = "com.meeyao.qianwen"
    /// A deliberate fault in the driver's own record, to prove the checks can fail.
    var mutation = ""

    init(arguments: [String]) throws {
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw FaultUsage("missing value for \(arguments[index - 1])") }
            return arguments[index]
        }
        func bounded(_ text: String, _ range: ClosedRange<Int>, _ name: String) throws -> Int {
            guard let number = Int(text), range.contains(number) else { throw FaultUsage("\(name) must be \(range)") }
            return number
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--gateways": gateways = try Self.addresses(try value())
            case "--points": points = try Self.addresses(try value())
            case "--ca": caPath = try value()
            case "--users": usersPath = try value()
            case "--internal-ca": internalCADirectory = try value()
            case "--spend-caller": spendCaller = try value()
            case "--out": outputDirectory = try value()
            case "--seconds": seconds = try bounded(try value(), 1...FaultLimits.secondsMax, "--seconds")
            case "--settle-seconds":
                settleSeconds = try bounded(try value(), 1...FaultLimits.settleSecondsMax, "--settle-seconds")
            case "--workers": workers = try bounded(try value(), 1...FaultLimits.workersMax, "--workers")
            case "--bundle-id": bundleId = try value()
            case "--mutate": mutation = try value()
            case let other: throw FaultUsage("unknown argument \(other)")
            }
            index += 1
        }
        guard !gateways.isEmpty, !points.isEmpty, !caPath.isEmpty, !usersPath.isEmpty, !internalCADirectory.isEmpty,
            !outputDirectory.isEmpty
        else {
            throw FaultUsage("run needs --gateways, --points, --ca, --users, --internal-ca and --out")
        }
        guard ["", "forget-purchase"].contains(mutation) else { throw FaultUsage("--mutate: only forget-purchase") }
    }

    /// `host:port[,host:port...]`.
    static func addresses(_ text: String) throws -> [HostAndPort] {
        try text.split(separator: ",").map { part in
            guard let colon = part.lastIndex(of: ":"), let port = Int(part[part.index(after: colon)...]),
                (1...65535).contains(port)
            else {
                throw FaultUsage("not host:port: \(part)")
            }
            return HostAndPort(host: String(part[..<colon]), port: port)
        }
    }
}

/// Every maximum of the driver in one place.
enum FaultLimits {
    static let secondsMax = 600
    static let settleSecondsMax = 300
    static let workersMax = 64
    static let usersMax = 1_000
    static let purchasesMax = 100_000
    static let httpTimeoutSeconds = 15.0
    static let rpcTimeoutSeconds: Int64 = 10
    static let settlePauseMilliseconds = 500
    /// After a refused connection: an app backs off too, and the run stays bounded.
    static let failurePauseMilliseconds = 100
    /// Credits of the product bought (config/packages.json's starter_pack).
    static let productCode = "starter_pack"
    static let appStoreProductId = "com.meeyao.qianwen.starter_pack"
}

/// A usage problem, said in words.
struct FaultUsage: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
