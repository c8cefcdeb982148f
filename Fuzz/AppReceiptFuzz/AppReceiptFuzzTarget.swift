// libFuzzer entry point over the StoreKit 1 receipt reader. Not a SwiftPM
// target: scripts/fuzz-receipts.sh compiles it together with the sources of
// AppReceipt into one module (so internal types are reachable) with
// `-sanitize=fuzzer,address`.
//
// The first input byte picks what the rest is:
//   0: the decoded receipt bytes (DER or BER);
//   1: a receipt payload, wrapped in a fixed DER SignedData (reaches the
//      attribute reader without the fuzzer finding the container first);
//   other: base64 text.
// Oracles (a violation traps, which libFuzzer reports as a crash):
//   - every read ends in a receipt or an AppReceiptError (a crash, a hang
//     or an out-of-bounds read is a finding);
//   - a receipt read keeps the reader's promises: a bundle id, at most
//     `inAppPurchasesMax` purchases, ids of printable ASCII within their
//     limit, transaction ids without repeats and exactly the purchases' ids;
//   - strict base64: a text that decodes re-encodes to the same text;
//   - reading is deterministic.
import CryptoPrimitives
import Foundation

let fuzzReader = AppReceiptReader()

func checkPromises(_ receipt: AppReceipt) {
    precondition(!receipt.bundleId.isEmpty && receipt.bundleId.utf8.count <= AppReceiptLimits.textBytesMax)
    precondition(receipt.inAppPurchases.count <= AppReceiptLimits.inAppPurchasesMax)
    precondition(Set(receipt.transactionIds).count == receipt.transactionIds.count, "repeated transaction id")
    precondition(Set(receipt.transactionIds) == Set(receipt.inAppPurchases.map(\.transactionId)))
    for purchase in receipt.inAppPurchases {
        precondition((1...AppReceiptLimits.transactionIdBytesMax).contains(purchase.transactionId.utf8.count))
        precondition(purchase.transactionId.utf8.allSatisfy { (0x21...0x7E).contains($0) })
        precondition((purchase.quantity ?? 0) >= 0)
    }
}

func read(_ bytes: [UInt8]) {
    let first = Result { () throws(AppReceiptError) in try fuzzReader.read(bytes: bytes) }
    let second = Result { () throws(AppReceiptError) in try fuzzReader.read(bytes: bytes) }
    precondition(first == second, "reading is not deterministic")
    if case .success(let receipt) = first { checkPromises(receipt) }
}

/// DER header of `tag` over `count` content bytes.
func header(_ tag: UInt8, _ count: Int) -> [UInt8] {
    if count < 0x80 { return [tag, UInt8(count)] }
    var octets: [UInt8] = []
    var rest = count
    while rest > 0 {
        octets.insert(UInt8(rest & 0xFF), at: 0)
        rest >>= 8
    }
    return [tag, 0x80 | UInt8(octets.count)] + octets
}

/// ContentInfo { signedData, [0] { SignedData { 1, {}, { data, [0] { OCTET STRING payload } }, {} } } }.
func wrapped(_ payload: [UInt8]) -> [UInt8] {
    let octetString = header(0x04, payload.count) + payload
    let explicitContent = header(0xA0, octetString.count) + octetString
    let dataOID: [UInt8] = [0x06, 0x09] + SignedDataReader.dataOID
    let encapsulated = header(0x30, dataOID.count + explicitContent.count) + dataOID + explicitContent
    let fields: [UInt8] = [0x02, 0x01, 0x01, 0x31, 0x00] + encapsulated + [0x31, 0x00]
    let signedData = header(0x30, fields.count) + fields
    let content = header(0xA0, signedData.count) + signedData
    let signedDataOID: [UInt8] = [0x06, 0x09] + SignedDataReader.signedDataOID
    return header(0x30, signedDataOID.count + content.count) + signedDataOID + content
}

@_cdecl("LLVMFuzzerTestOneInput")
public func appReceiptFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] {
    case 0:
        read(body)
    case 1:
        read(wrapped(body))
    default:
        if let decoded = try? StrictBase64.decodeStandard(body) {
            precondition(Array(Data(decoded).base64EncodedString().utf8) == body, "base64 decode/encode mismatch")
        }
        _ = try? fuzzReader.read(base64: String(decoding: body, as: UTF8.self))
    }
    return 0
}
