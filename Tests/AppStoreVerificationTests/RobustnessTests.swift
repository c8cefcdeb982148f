import CryptoPrimitives
import Foundation
import TestSupport
import XCTest
@testable import AppStoreVerification

/// Mutated input never crashes: every outcome is a typed failure or a valid decode.
final class RobustnessTests: XCTestCase {
    private typealias PKI = TestPKI
    private static let iterationsMax = 2_000

    func testRandomMutationsOfValidJWS() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let original = try authority.sign(payloadJSON: PKI.transactionJSON())
        let payloadJSON = Array(PKI.transactionJSON().utf8)
        var generator = SeededRandom(seed: 0x1A9_2026)
        var failureCodes: [String: Int] = [:]
        var successes = 0
        for iteration in 0..<Self.iterationsMax {
            let candidate: String
            if iteration % 4 == 3 {
                // Mutate the payload and re-sign it, so the JSON parser and decoders see it.
                var payload = payloadJSON
                mutate(&payload, using: &generator)
                candidate = try authority.sign(
                    headerBytes: Array(authority.standardHeaderJSON.utf8), payloadBytes: payload)
            } else {
                var bytes = Array(original.utf8)
                mutate(&bytes, using: &generator)
                candidate = String(decoding: bytes, as: UTF8.self)
            }
            do {
                let transaction = try verifier.verifyTransaction(candidate)
                XCTAssertEqual(transaction.bundleId, PKI.bundleId)
                XCTAssertEqual(transaction.environment, .sandbox)
                successes += 1
            } catch {
                failureCodes[error.code, default: 0] += 1
            }
        }
        XCTAssertGreaterThan(failureCodes.values.reduce(0, +), Self.iterationsMax / 2)
        XCTAssertGreaterThan(failureCodes.count, 3, "\(failureCodes)")
        XCTAssertNil(failureCodes["retryable"])
        XCTAssertLessThan(successes, Self.iterationsMax)
    }

    /// A forged JWS (no valid chain or signature) whose dates are extreme is
    /// refused as a bad payload: the offline check reads `signedDate` before
    /// the chain, and `Int64.min` milliseconds once overflowed the floor to
    /// seconds and stopped the process.
    func testForgedJWSWithExtremeDatesIsRefusedNotACrash() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let header = StrictBase64.encodeURL(Array(#"{"alg":"ES256","x5c":["AAAA","AAAA","AAAA"]}"#.utf8))
        let signature = StrictBase64.encodeURL([UInt8](repeating: 1, count: 64))
        for date in ["-9223372036854775808", "-9223372036854775000", "-1", "9223372036854775807", "253402300800000"] {
            for key in ["signedDate", "receiptCreationDate"] {
                let payload = StrictBase64.encodeURL(Array(#"{"\#(key)":\#(date)}"#.utf8))
                XCTAssertThrowsError(
                    try verifier.verifyTransaction("\(header).\(payload).\(signature)"), "\(key) \(date)"
                ) { error in
                    XCTAssertEqual((error as? VerificationFailure)?.code, "invalid_payload", "\(key) \(date): \(error)")
                }
            }
        }
        XCTAssertEqual(AppStoreTimestamp(millisecondsSince1970: .min).secondsSince1970, -9_223_372_036_854_776)
        XCTAssertEqual(AppStoreTimestamp(millisecondsSince1970: -1).secondsSince1970, -1)
        XCTAssertEqual(AppStoreTimestamp(millisecondsSince1970: -1000).secondsSince1970, -1)
        XCTAssertEqual(AppStoreTimestamp(millisecondsSince1970: 1999).secondsSince1970, 1)
    }

    private func mutate(_ bytes: inout [UInt8], using generator: inout SeededRandom) {
        guard !bytes.isEmpty else { return }
        let position = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
        case 1: bytes[position] = UInt8.random(in: 0...255, using: &generator)
        case 2: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: position)
        case 3: bytes.remove(at: position)
        case 4: bytes.removeSubrange(position..<bytes.count)
        default:
            let length = min(Int.random(in: 1...16, using: &generator), bytes.count - position)
            bytes.insert(contentsOf: bytes[position..<(position + length)], at: position)
        }
    }

    /// One verifier shared by many threads (bounded count).
    func testConcurrentVerificationIsConsistent() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let good = try authority.sign(payloadJSON: PKI.transactionJSON())
        var signature = try StrictBase64.decodeURL(good.split(separator: ".")[2].utf8)
        signature[5] ^= 0x10
        let bad = PKI.replacingPart(good, index: 2, with: StrictBase64.encodeURL(signature))
        let outcomes = OutcomeCounter()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let jws = index % 2 == 0 ? good : bad
            do {
                _ = try verifier.verifyTransaction(jws)
                outcomes.record(success: index % 2 == 0)
            } catch {
                outcomes.record(success: index % 2 == 1 && (error as? VerificationFailure) == .badSignature)
            }
        }
        XCTAssertEqual(outcomes.correct, 200)
        XCTAssertEqual(verifier.cachedChainCount, 1)
    }
}

private final class OutcomeCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var correctCount = 0
    func record(success: Bool) { lock.withLock { if success { correctCount += 1 } } }
    var correct: Int { lock.withLock { correctCount } }
}
