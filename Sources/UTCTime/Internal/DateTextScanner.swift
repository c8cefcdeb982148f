/// Reads a date text byte by byte from the front: fixed-width digits,
/// literal bytes, names. Every read either consumes and succeeds or
/// returns nil/false and leaves the cursor where it was.
struct DateTextScanner {
    private let bytes: [UInt8]
    private(set) var cursor = 0

    init(_ text: some StringProtocol) { bytes = Array(text.utf8) }

    var atEnd: Bool { cursor == bytes.count }

    /// The next byte, without consuming it.
    var next: UInt8? { cursor < bytes.count ? bytes[cursor] : nil }

    /// Exactly `count` ASCII digits as a number.
    mutating func digits(_ count: Int) -> Int64? {
        guard bytes.count - cursor >= count else { return nil }
        var value: Int64 = 0
        for offset in 0..<count {
            let byte = bytes[cursor + offset]
            guard Self.isDigit(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        cursor += count
        return value
    }

    /// Consumes the next byte when it is one of `allowed`.
    mutating func take(_ allowed: UInt8...) -> Bool {
        guard let byte = next, allowed.contains(byte) else { return false }
        cursor += 1
        return true
    }

    /// Consumes one of `names` (exact case) and returns its index.
    mutating func name(among names: [String]) -> Int? {
        for (index, name) in names.enumerated() {
            let utf8 = Array(name.utf8)
            if bytes.count - cursor >= utf8.count, bytes[cursor..<(cursor + utf8.count)].elementsEqual(utf8) {
                cursor += utf8.count
                return index
            }
        }
        return nil
    }

    /// Consumes a run of digits (up to `countMax` of them are kept) and
    /// returns the kept value and the run's length.
    mutating func digitRun(keeping countMax: Int) -> (value: Int64, kept: Int, length: Int) {
        var value: Int64 = 0
        var length = 0
        while let byte = next, Self.isDigit(byte) {
            if length < countMax { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
            length += 1
            cursor += 1
        }
        return (value, min(length, countMax), length)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
