/// One field line, `field-name ":" OWS field-value OWS` (RFC 9112 §5),
/// refusing obs-fold, whitespace before the colon and control characters.
struct HTTPFieldLine: Sendable {
    let name: String
    let value: String

    static func parse(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> HTTPFieldLine {
        guard let first = line.first else { throw HTTPRequestError(.invalidHeaderField) }
        if first == HTTPByte.space || first == HTTPByte.tab { throw HTTPRequestError(.obsoleteLineFolding) }
        guard let colon = line.firstIndex(of: HTTPByte.colon), colon > line.startIndex else {
            throw HTTPRequestError(.invalidHeaderField)
        }
        let nameBytes = line[line.startIndex..<colon]
        if let last = nameBytes.last, last == HTTPByte.space || last == HTTPByte.tab {
            throw HTTPRequestError(.whitespaceBeforeColon)
        }
        guard nameBytes.allSatisfy(HTTPByte.isTokenCharacter) else { throw HTTPRequestError(.invalidHeaderField) }
        var valueBytes = line[(colon + 1)...]
        while let byte = valueBytes.first, byte == HTTPByte.space || byte == HTTPByte.tab { valueBytes.removeFirst() }
        while let byte = valueBytes.last, byte == HTTPByte.space || byte == HTTPByte.tab { valueBytes.removeLast() }
        // field-vchar = VCHAR / obs-text, with SP and HTAB between them; one
        // pass also tells whether the value is ASCII (nearly every one is).
        var isASCII = true
        for byte in valueBytes {
            guard byte == HTTPByte.tab || (byte >= 0x20 && byte != 0x7F) else {
                throw HTTPRequestError(.invalidHeaderField)
            }
            if byte >= 0x80 { isASCII = false }
        }
        return HTTPFieldLine(
            name: String(decoding: nameBytes, as: UTF8.self),
            value: isASCII ? String(decoding: valueBytes, as: UTF8.self) : HTTPByte.latin1String(valueBytes))
    }
}
