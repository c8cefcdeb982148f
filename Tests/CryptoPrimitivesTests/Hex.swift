/// Hex text <-> bytes for the known-answer vectors.
enum Hex {
    static func bytes(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8).filter { $0 != UInt8(ascii: " ") }
        precondition(digits.count % 2 == 0, "odd hex")
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    static func text(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
