import Foundation
import IAPCreditsClient
import XCTest

final class FilePurchaseRecordStoreTests: XCTestCase {
    var directory: URL!

    override func setUp() {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "records-\(UUID().uuidString)/iap")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }

    private func record(_ id: String, at milliseconds: Int64 = 1_700_000_000_000) -> PendingPurchaseRecord {
        PendingPurchaseRecord(
            transactionId: id, productCode: "starter_pack", appStoreProductId: "com.meeyao.qianwen.starter_pack",
            signedTransactionInfo: "eyJhbGciOiJFUzI1NiJ9.secret-\(id).c2ln", appAccountToken: UUID(),
            recordedAtUnixMilliseconds: milliseconds)
    }

    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func testRecordsSurviveANewStoreOverTheSameFolder() async throws {
        let store = try FilePurchaseRecordStore(directory: directory)
        let first = record("2000000000000001", at: 1)
        var second = record("2000000000000002", at: 2)
        try await store.save(first)
        try await store.save(second)
        second.submissionCount = 3
        second.lastFailure = "PAYMENT_GRANT_FAILED"
        try await store.save(second)

        let relaunched = try FilePurchaseRecordStore(directory: directory)
        let records = try await relaunched.allRecords()
        XCTAssertEqual(records, [first, second])
        try await relaunched.remove(transactionId: first.transactionId)
        try await relaunched.remove(transactionId: first.transactionId)
        let left = try await relaunched.allRecords()
        XCTAssertEqual(left, [second])
    }

    func testTheFolderIsPrivateAndEveryFileIsModeSixHundred() async throws {
        let store = try FilePurchaseRecordStore(directory: directory)
        try await store.save(record("2000000000000003"))
        XCTAssertEqual(try mode(directory.path), 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertEqual(names, ["2000000000000003.json"])
        XCTAssertEqual(try mode(directory.appendingPathComponent(names[0]).path), 0o600)
    }

    func testAWiderFolderIsNarrowed() throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = try FilePurchaseRecordStore(directory: directory)
        XCTAssertEqual(try mode(directory.path), 0o700)
    }

    /// A temporary file as a save interrupted `ageSeconds` ago left it.
    private func temporaryFile(ageSeconds: Int) throws -> URL {
        let torn = directory.appendingPathComponent(".tmp-\(UUID().uuidString)")
        try Data("{\"version\":1,\"transactionId\":\"2000".utf8).write(to: torn)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -Double(ageSeconds))], ofItemAtPath: torn.path)
        return torn
    }

    func testAnInterruptedSaveLeavesTheOldRecordAndItsTemporaryFileGoes() async throws {
        let store = try FilePurchaseRecordStore(directory: directory)
        let kept = record("2000000000000004")
        try await store.save(kept)
        let torn = try temporaryFile(ageSeconds: ClientLimits.abandonedTemporaryFileAgeSecondsMin + 60)
        let records = try await store.allRecords()
        XCTAssertEqual(records, [kept])
        XCTAssertFalse(FileManager.default.fileExists(atPath: torn.path))
    }

    /// Another store on the same folder (another account's client, an app
    /// extension) is writing: its temporary file is not swept from under it.
    func testAFreshTemporaryFileIsLeftToTheSaveWritingIt() async throws {
        let store = try FilePurchaseRecordStore(directory: directory)
        let writing = try temporaryFile(ageSeconds: 1)
        let records = try await store.allRecords()
        XCTAssertTrue(records.isEmpty)
        XCTAssertTrue(FileManager.default.fileExists(atPath: writing.path))
    }

    /// Two stores over one folder: every save of one survives the other
    /// listing (and sweeping) the folder at the same time.
    func testSavesSurviveAnotherStoreListingTheFolder() async throws {
        let writer = try FilePurchaseRecordStore(directory: directory)
        let reader = try FilePurchaseRecordStore(directory: directory)
        let count = 100
        let listing = Task {
            var lists = 0
            while !Task.isCancelled {
                _ = try? await reader.allRecords()
                lists += 1
            }
            return lists
        }
        var failures: [String] = []
        for index in 0..<count {
            do {
                try await writer.save(record(String(5_000_000 + index), at: Int64(index)))
            } catch {
                failures.append("\(error)")
            }
        }
        listing.cancel()
        let lists = await listing.value
        XCTAssertGreaterThan(lists, 0)
        XCTAssertEqual(failures, [])
        let saved = try await writer.allRecords()
        XCTAssertEqual(saved.count, count)
    }

    func testAnUnreadableFileIsSkippedAndKept() async throws {
        let store = try FilePurchaseRecordStore(directory: directory)
        try await store.save(record("2000000000000005"))
        let garbage = directory.appendingPathComponent("2000000000000006.json")
        try Data("not json".utf8).write(to: garbage)
        let renamed = directory.appendingPathComponent("2000000000000007.json")
        try JSONEncoder().encode(record("2000000000000008")).write(to: renamed)
        let records = try await store.allRecords()
        XCTAssertEqual(records.map(\.transactionId), ["2000000000000005"])
        let unreadable = await store.unreadableFileCount
        XCTAssertEqual(unreadable, 2)
        XCTAssertTrue(FileManager.default.fileExists(atPath: garbage.path), "kept for support")
    }

    func testAnotherFormatVersionIsNotRead() async throws {
        let store = try FilePurchaseRecordStore(directory: directory)
        var json = try XCTUnwrap(
            JSONSerialization.jsonObject(with: JSONEncoder().encode(record("2000000000000009"))) as? [String: Any])
        XCTAssertEqual(json["version"] as? Int, 1)
        json["version"] = 2
        try JSONSerialization.data(withJSONObject: json).write(
            to: directory.appendingPathComponent("2000000000000009.json"))
        let records = try await store.allRecords()
        XCTAssertTrue(records.isEmpty)
    }

    func testATransactionIdThatIsNotDigitsIsRefused() async throws {
        let store = try FilePurchaseRecordStore(directory: directory)
        for id in ["../escape", "", "12a", String(repeating: "1", count: 33)] {
            do {
                try await store.save(record(id))
                XCTFail("saved \(id)")
            } catch {
                XCTAssertEqual(error as? PurchaseRecordStoreError, .invalidTransactionId)
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
    }

    func testTheInMemoryStoreKeepsTheSameRules() async throws {
        let store = InMemoryPurchaseRecordStore()
        for index in 0..<ClientLimits.pendingRecordsMax {
            try await store.save(record(String(3_000_000 + index), at: Int64(index)))
        }
        do {
            try await store.save(record("4000000"))
            XCTFail("a full store refuses")
        } catch {
            XCTAssertEqual(error as? PurchaseRecordStoreError, .full)
        }
        try await store.save(record("3000000", at: 0))
        await store.remove(transactionId: "3000001")
        let count = await store.allRecords().count
        XCTAssertEqual(count, ClientLimits.pendingRecordsMax - 1)
    }
}
