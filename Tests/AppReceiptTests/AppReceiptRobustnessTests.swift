import AppReceipt
import Foundation
import TestSupport
import XCTest

/// Hostile bytes: every truncation of valid receipts, seeded random
/// mutations, random garbage. Each read must end in a receipt or an
/// `AppReceiptError` (the typed throw makes anything else impossible to
/// return); a crash or a hang fails the run. Replay a failing sequence
/// with the seed printed: APP_RECEIPT_SEED=<seed>.
final class AppReceiptRobustnessTests: XCTestCase {
    private static let signer = Result { try OpenSSLCMSSigner.selfSigned() }

    override class func tearDown() {
        try? signer.get().removeFiles()
        super.tearDown()
    }
    private let reader = AppReceiptReader()

    /// Small receipts in each encoding: OpenSSL's DER and streamed BER,
    /// hand-made Xcode-style BER and every-liberty BER.
    private func samples() throws -> [(String, [UInt8])] {
        let signer = try Self.signer.get()
        var purchases = ["1000000000000001", "1000000000000002", "1000000000000001"].map {
            TestReceipt.Purchase(transactionId: $0)
        }
        purchases[1].cancellationDate = "2023-10-20T00:00:00Z"
        let receipt = TestReceipt(purchases: purchases)
        return [
            ("openssl DER", try signer.sign(receipt.payload().encoded(), .cms)),
            ("openssl streamed BER", try signer.sign(receipt.payload().encoded(), .cmsStreamed)),
            ("Xcode-style BER", receipt.signedData(.xcode)),
            ("every BER liberty", receipt.signedData(.everyLiberty)),
        ]
    }

    /// Every proper prefix is truncated: the outer element's length (or its
    /// missing end-of-contents marker) says more bytes were due. Never a
    /// partial answer, never another code.
    func testTruncationAtEveryOffset() throws {
        for (name, bytes) in try samples() {
            let whole = try reader.read(bytes: bytes)
            XCTAssertEqual(whole.transactionIds, ["1000000000000001", "1000000000000002"], name)
            for count in 0..<bytes.count {
                do {
                    let partial = try reader.read(bytes: Array(bytes.prefix(count)))
                    XCTFail("\(name): \(count) of \(bytes.count) bytes read as \(partial)")
                } catch {
                    XCTAssertEqual(error.code, .truncated, "\(name): \(count) of \(bytes.count) bytes: \(error)")
                }
            }
        }
    }

    /// Cutting the base64 text anywhere: not base64 (a length that is not a
    /// multiple of 4), or a whole number of quads that decode to a prefix.
    func testBase64CutAtEveryCharacter() throws {
        for (name, bytes) in try samples().prefix(2) {
            let text = Data(bytes).base64EncodedString()
            for count in 0..<text.count {
                do {
                    _ = try reader.read(base64: String(text.prefix(count)))
                    XCTFail("\(name): \(count) characters read")
                } catch {
                    XCTAssertEqual(
                        error.code, count % 4 == 0 ? .truncated : .notBase64, "\(name): \(count) characters: \(error)")
                }
            }
        }
    }

    /// Seeded random mutations of each sample: flipped bits, bytes set to
    /// telling values (0x00, 0x80, 0xFF, 0x84, 0x1F, 0x30, 0x24), inserted,
    /// deleted and duplicated runs. A mutant that still reads must satisfy
    /// the reader's promises.
    func testSeededRandomMutations() throws {
        let seed = SeededRandom.seed(from: "APP_RECEIPT_SEED")
        print("AppReceiptRobustnessTests seed: \(seed) (replay with APP_RECEIPT_SEED=\(seed))")
        var random = SeededRandom(seed: seed)
        var outcomes: [String: Int] = [:]
        for (_, sample) in try samples() {
            for _ in 0..<2_500 {
                let mutant = mutate(sample, &random)
                do {
                    let receipt = try reader.read(bytes: mutant)
                    checkPromises(receipt, seed: seed)
                    outcomes["read", default: 0] += 1
                } catch {
                    outcomes[error.code.name, default: 0] += 1
                    XCTAssertFalse(error.detail.isEmpty)
                }
            }
        }
        print("AppReceiptRobustnessTests outcomes: \(outcomes.sorted { $0.key < $1.key })")
        // The mutations reach well past the first byte: several kinds of refusal, and some survivors.
        XCTAssertGreaterThanOrEqual(outcomes.count, 6, "seed \(seed): \(outcomes)")
    }

    /// Random bytes, random base64 of random bytes, and random bytes behind
    /// a valid-looking ContentInfo header.
    func testRandomGarbage() {
        let seed = SeededRandom.seed(from: "APP_RECEIPT_SEED")
        print("AppReceiptRobustnessTests garbage seed: \(seed)")
        var random = SeededRandom(seed: seed)
        for round in 0..<3_000 {
            var bytes = (0..<Int(random.next(upTo: 300))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if round % 3 == 1 { bytes = [0x30, 0x80, 0x06, 0x09] + ASN1.signedDataOID + [0xA0, 0x80] + bytes }
            if round % 3 == 2 { bytes = [0x30, 0x82, 0x01, 0x00] + bytes }
            do {
                let receipt = try reader.read(bytes: bytes)
                checkPromises(receipt, seed: seed)
            } catch {
                XCTAssertNotEqual(error.code, .tooLarge, "seed \(seed)")
            }
            let text = String(
                decoding: (0..<Int(random.next(upTo: 40))).map { _ in UInt8(random.next(upTo: 128)) }, as: UTF8.self)
            _ = try? reader.read(base64: text)
        }
    }

    private func mutate(_ sample: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = sample
        let telling: [UInt8] = [0x00, 0x80, 0xFF, 0x84, 0x1F, 0x30, 0x24, 0x7F, 0x81]
        for _ in 0...random.next(upTo: 3) {
            guard !bytes.isEmpty else { break }
            let index = Int(random.next(upTo: UInt64(bytes.count)))
            switch random.next(upTo: 6) {
            case 0: bytes[index] ^= UInt8(1) << UInt8(random.next(upTo: 8))
            case 1: bytes[index] = telling[Int(random.next(upTo: UInt64(telling.count)))]
            case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: index)
            case 3: bytes.removeSubrange(index..<min(bytes.count, index + 1 + Int(random.next(upTo: 8))))
            case 4:
                let run = bytes[index..<min(bytes.count, index + 1 + Int(random.next(upTo: 16)))]
                bytes.insert(contentsOf: run, at: Int(random.next(upTo: UInt64(bytes.count))))
            default: bytes[index] = UInt8(truncatingIfNeeded: random.next())
            }
        }
        return bytes
    }

    /// What every receipt the reader returns satisfies.
    private func checkPromises(_ receipt: AppReceipt, seed: UInt64, file: StaticString = #filePath, line: UInt = #line)
    {
        let message = "seed \(seed)"
        XCTAssertFalse(receipt.bundleId.isEmpty, message, file: file, line: line)
        XCTAssertLessThanOrEqual(
            receipt.bundleId.utf8.count, AppReceiptLimits.textBytesMax, message, file: file, line: line)
        XCTAssertLessThanOrEqual(
            receipt.inAppPurchases.count, AppReceiptLimits.inAppPurchasesMax, message, file: file, line: line)
        XCTAssertEqual(Set(receipt.transactionIds).count, receipt.transactionIds.count, message, file: file, line: line)
        XCTAssertEqual(
            Set(receipt.transactionIds), Set(receipt.inAppPurchases.map(\.transactionId)), message, file: file,
            line: line)
        for purchase in receipt.inAppPurchases {
            XCTAssertTrue(
                (1...AppReceiptLimits.transactionIdBytesMax).contains(purchase.transactionId.utf8.count), message,
                file: file, line: line)
            XCTAssertTrue(
                purchase.transactionId.utf8.allSatisfy { (0x21...0x7E).contains($0) }, message, file: file, line: line)
            XCTAssertTrue((purchase.quantity ?? 0) >= 0, message, file: file, line: line)
        }
    }
}
