/// `chunk-size [ chunk-ext ]` (RFC 9112 §7.1): hex digits, then extensions
/// that are checked for stray control characters and otherwise ignored.
enum HTTPChunkSizeLine {
    /// Significant hex digits accepted before calling the size an overflow.
    static let significantDigitsMax = 15

    static func parse(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> Int {
        var index = line.startIndex
        var size = 0
        var significantDigits = 0
        while index < line.endIndex, let digit = hexValue(line[index]) {
            if significantDigits > 0 || digit != 0 { significantDigits += 1 }
            if significantDigits > significantDigitsMax { throw HTTPRequestError(.invalidChunkSize) }
            size = size << 4 | Int(digit)
            index += 1
        }
        guard index > line.startIndex else { throw HTTPRequestError(.invalidChunkSize) }
        var rest = line[index...]
        while let byte = rest.first, byte == HTTPByte.space || byte == HTTPByte.tab { rest.removeFirst() }
        if let first = rest.first {
            guard first == UInt8(ascii: ";") else { throw HTTPRequestError(.invalidChunkSize) }
            guard rest.allSatisfy({ $0 == HTTPByte.tab || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw HTTPRequestError(.invalidChunkSize)
            }
        }
        return size
    }
}
