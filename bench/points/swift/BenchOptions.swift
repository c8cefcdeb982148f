import Foundation

/// PointsBench's command line; every count and duration is clamped to a named bound.
struct BenchOptions {
    static let requestsMax = 1_000_000
    static let concurrencyMax = 512
    static let secondsMax = 60.0
    static let callTimeoutSeconds = 10

    /// Whose balance each grant credits.
    enum UserMode: String {
        /// A fresh user per grant: no two transactions wait on one row lock.
        case distinct
        /// One user for every grant: all transactions serialise on its row lock.
        case hot
    }

    /// What each request does.
    enum Operation: String {
        case grant
        case spend
        /// GetBalance of funded users (reads only).
        case balance
    }

    var target = ""
    var mode = UserMode.distinct
    var operation = Operation.grant
    var requests = 20_000
    var warmupRequests = 500
    var concurrency = 16
    var seconds = 20.0
    var productCode = "starter_pack"

    init(arguments: [String]) throws {
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw BenchError.usage("missing value for \(arguments[index - 1])") }
            return arguments[index]
        }
        func integer(_ range: ClosedRange<Int>) throws -> Int {
            let text = try value()
            guard let number = Int(text), range.contains(number) else {
                throw BenchError.usage(
                    "\(arguments[index - 1]) must be \(range.lowerBound)...\(range.upperBound), got \(text)")
            }
            return number
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--target": target = try value()
            case "--mode":
                let text = try value()
                guard let parsed = UserMode(rawValue: text) else {
                    throw BenchError.usage("--mode must be distinct or hot")
                }
                mode = parsed
            case "--operation":
                let text = try value()
                guard let parsed = Operation(rawValue: text) else {
                    throw BenchError.usage("--operation must be grant, spend or balance")
                }
                operation = parsed
            case "--requests": requests = try integer(1...Self.requestsMax)
            case "--warmup": warmupRequests = try integer(0...Self.requestsMax)
            case "--concurrency": concurrency = try integer(1...Self.concurrencyMax)
            case "--seconds":
                let text = try value()
                guard let parsed = Double(text), parsed > 0, parsed <= Self.secondsMax else {
                    throw BenchError.usage("--seconds must be in (0, \(Self.secondsMax)]")
                }
                seconds = parsed
            case "--product": productCode = try value()
            case "-h", "--help": throw BenchError.usage("")
            case let other: throw BenchError.usage("unknown argument \(other)")
            }
            index += 1
        }
        guard !target.isEmpty else { throw BenchError.usage("--target host:port is required") }
    }

    static let usage = """
        usage: PointsBench --target HOST:PORT [--mode distinct|hot] [--operation grant|spend|balance]
                           [--requests N] [--warmup N] [--concurrency C] [--seconds S] [--product CODE]
        Sends GrantRequests with distinct event ids (or 1-credit SpendRequests, or GetBalanceRequests,
        for users it funds first) from C concurrent tasks over one RPCClient, stopping after N requests
        or S seconds, whichever comes first, and prints one line:
        operation=... mode=... requests=... errors=... seconds=... <operation>s_per_second=... p50_ms=... p99_ms=...
        """
}

/// Why the bench could not run.
enum BenchError: Error {
    case usage(String)
    case failed(String)
}
