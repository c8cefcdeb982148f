/// Swift property names (camelCase) and proto field names (snake_case).
enum FieldName {
    /// `appStoreProductId` -> `app_store_product_id`.
    static func protoName(forSwiftName name: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count + 4)
        for byte in name.utf8 {
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                bytes.append(UInt8(ascii: "_"))
                bytes.append(byte + 32)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `app_store_product_id` -> `appStoreProductId`: computed once per
    /// field when the layout tables are built, never per message.
    static func swiftName(forProtoName name: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count)
        var upperNext = false
        for byte in name.utf8 {
            if byte == UInt8(ascii: "_") {
                upperNext = true
            } else if upperNext && byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") {
                bytes.append(byte - 32)
                upperNext = false
            } else {
                bytes.append(byte)
                upperNext = false
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
