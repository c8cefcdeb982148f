import Foundation

/// Records as one JSON file per transaction (`<transactionId>.json`) in a
/// folder of the app's private storage (e.g. Application Support). The
/// folder is made mode 0700 and every file is created mode 0600 (on iOS
/// also protected until the first unlock after boot, so a background
/// launch can still read it). A save writes a temporary file, syncs it
/// (`F_FULLFSYNC` on Apple platforms, where `fsync` may leave it in the
/// drive's cache) and renames it over the old one, then syncs the folder: a
/// crash leaves either the old record or the new one. Several stores may
/// share one folder (one per signed-in account, an app extension): a
/// temporary file is swept only once it is older than
/// `ClientLimits.abandonedTemporaryFileAgeSecondsMin`, so no store deletes
/// another's save in progress.
///
/// The files hold signed transactions (needed to resubmit) and never a
/// bearer token. Do not put the folder in a shared container or a backup
/// the user can export.
public actor FilePurchaseRecordStore: PurchaseRecordStore {
    public let directory: URL
    /// Files that were not readable records at the last `allRecords()`
    /// (kept in place for support, never deleted).
    public private(set) var unreadableFileCount = 0

    private static let fileSuffix = ".json"
    private static let temporaryPrefix = ".tmp-"

    /// Uses (and creates, mode 0700) `directory`.
    public init(directory: URL) throws {
        self.directory = directory
        let path = directory.path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard chmod(path, 0o700) == 0 else { throw PurchaseRecordStoreError.io(operation: "chmod", errno: errno) }
    }

    public func allRecords() throws -> [PendingPurchaseRecord] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PurchaseRecordStoreError.io(operation: "list", errno: errno)
        }
        var records: [PendingPurchaseRecord] = []
        var unreadable = 0
        let decoder = JSONDecoder()
        for name in names.sorted() {
            let path = directory.appendingPathComponent(name).path
            if name.hasPrefix(Self.temporaryPrefix) {
                // A save interrupted before its rename (the old record, if any,
                // stands), or another store's save still being written.
                if Self.isAbandoned(temporaryFileAt: path) { unlink(path) }
                continue
            }
            guard name.hasSuffix(Self.fileSuffix) else { continue }
            guard records.count < ClientLimits.pendingRecordsMax,
                let data = FileManager.default.contents(atPath: path),
                data.count <= ClientLimits.signedTransactionBytesMax * 2,
                let record = try? decoder.decode(PendingPurchaseRecord.self, from: data),
                name == record.transactionId + Self.fileSuffix
            else {
                unreadable += 1
                continue
            }
            records.append(record)
        }
        unreadableFileCount = unreadable
        return records.sorted { $0.recordedAtUnixMilliseconds < $1.recordedAtUnixMilliseconds }
    }

    public func save(_ record: PendingPurchaseRecord) throws {
        guard PendingPurchaseRecord.isValidTransactionId(record.transactionId) else {
            throw PurchaseRecordStoreError.invalidTransactionId
        }
        let finalPath = path(of: record.transactionId)
        if !FileManager.default.fileExists(atPath: finalPath) {
            let count =
                (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?
                .filter { $0.hasSuffix(Self.fileSuffix) && !$0.hasPrefix(Self.temporaryPrefix) }.count ?? 0
            guard count < ClientLimits.pendingRecordsMax else { throw PurchaseRecordStoreError.full }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(record)
        } catch {
            throw PurchaseRecordStoreError.io(operation: "encode", errno: 0)
        }
        try writePrivately(data, to: finalPath)
    }

    public func remove(transactionId: String) throws {
        guard PendingPurchaseRecord.isValidTransactionId(transactionId) else {
            throw PurchaseRecordStoreError.invalidTransactionId
        }
        if unlink(path(of: transactionId)) != 0 && errno != ENOENT {
            throw PurchaseRecordStoreError.io(operation: "unlink", errno: errno)
        }
        try syncDirectory()
    }

    /// Older than `ClientLimits.abandonedTemporaryFileAgeSecondsMin` by its
    /// modification time (a clock set back makes it look young: it stays
    /// until it is old again).
    private static func isAbandoned(temporaryFileAt path: String) -> Bool {
        guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        else { return false }
        return Date().timeIntervalSince(modified) > Double(ClientLimits.abandonedTemporaryFileAgeSecondsMin)
    }

    private func path(of transactionId: String) -> String {
        directory.appendingPathComponent(transactionId + Self.fileSuffix).path
    }

    // MARK: Private, durable writes

    private func writePrivately(_ data: Data, to finalPath: String) throws {
        let temporary = directory.appendingPathComponent(Self.temporaryPrefix + UUID().uuidString).path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PurchaseRecordStoreError.io(operation: "open", errno: errno) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            try Self.writeAll(data, to: descriptor)
            try Self.syncToStorage(descriptor, operation: "fsync")
        }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        try? FileManager.default.setAttributes(
            [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: temporary)
        #endif
        guard rename(temporary, finalPath) == 0 else {
            throw PurchaseRecordStoreError.io(operation: "rename", errno: errno)
        }
        renamed = true
        try syncDirectory()
    }

    private static func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw PurchaseRecordStoreError.io(operation: "write", errno: errno)
                }
                offset += written
            }
        }
    }

    /// Makes a rename or unlink durable.
    private func syncDirectory() throws {
        let descriptor = open(directory.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PurchaseRecordStoreError.io(operation: "open directory", errno: errno) }
        defer { close(descriptor) }
        try Self.syncToStorage(descriptor, operation: "fsync directory")
    }

    /// Flushes `descriptor` to stable storage: `F_FULLFSYNC` where the
    /// platform has it (Apple's `fsync` only hands the data to the drive,
    /// which may keep it in its cache across a power loss), `fsync`
    /// otherwise or when the file system refuses `F_FULLFSYNC`. Retries EINTR.
    private static func syncToStorage(_ descriptor: Int32, operation: String) throws {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        #endif
        while fsync(descriptor) != 0 {
            guard errno == EINTR else { throw PurchaseRecordStoreError.io(operation: operation, errno: errno) }
        }
    }
}
