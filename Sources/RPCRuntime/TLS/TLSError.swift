import COpenSSL

/// Why TLS could not be set up or continued; carries OpenSSL's error text.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let detail: String

    init(_ operation: String) {
        self.operation = operation
        var text = [CChar](repeating: 0, count: 256)
        let code = ERR_get_error()
        ERR_error_string_n(code, &text, text.count)
        self.detail = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        ERR_clear_error()
    }

    public var description: String { "\(operation): \(detail)" }
}
