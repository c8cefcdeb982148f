/// Reads BER (X.690), and so DER, from untrusted bytes: definite and
/// indefinite lengths, constructed strings, high tag numbers. Every read
/// checks its bounds first, every loop advances by at least one element of
/// at least two bytes, and recursion stops at `AppReceiptLimits.depthMax`,
/// so no input can make it read out of bounds, loop forever or exhaust the
/// stack.
///
/// Elements are read lazily: a definite-length element's content is only
/// looked at when a caller asks for its children; an indefinite-length one
/// is walked to find its end-of-contents marker.
struct BERReader: Sendable {
    let bytes: [UInt8]
    /// Set when `bytes` was joined from a split string: errors then point at
    /// that string in the receipt instead of into the joined copy.
    let originOffset: Int?
    /// The largest length any element may declare: the reader's
    /// `receiptBytesMax`. Longer is `lengthOverflow`; shorter but past the
    /// bytes at hand is `truncated`.
    let lengthMax: Int

    init(bytes: [UInt8], lengthMax: Int, originOffset: Int? = nil) {
        self.bytes = bytes
        self.lengthMax = lengthMax
        self.originOffset = originOffset
    }

    func error(_ code: AppReceiptError.Code, _ detail: String, at offset: Int) -> AppReceiptError {
        AppReceiptError(code: code, detail: detail, byteOffset: originOffset ?? offset)
    }

    /// The one element that fills `range` exactly.
    func single(in range: Range<Int>, depth: Int, what: String) throws(AppReceiptError) -> BERElement {
        let element = try element(at: range.lowerBound, bound: range.upperBound, depth: depth)
        guard element.end == range.upperBound else {
            throw error(.trailingData, "bytes after \(what)", at: element.end)
        }
        return element
    }

    /// The element starting at `offset`, which must end by `bound` (the end
    /// of its parent's content).
    func element(at offset: Int, bound: Int, depth: Int) throws(AppReceiptError) -> BERElement {
        precondition(offset >= 0 && bound <= bytes.count)
        guard depth <= AppReceiptLimits.depthMax else {
            throw error(.tooDeep, "elements nested deeper than \(AppReceiptLimits.depthMax)", at: offset)
        }
        var index = offset
        let (tag, isConstructed) = try readTag(at: &index, bound: bound)
        guard index < bound else { throw error(.truncated, "element ends in its header", at: offset) }
        let lengthOctet = bytes[index]
        index += 1
        if lengthOctet == 0x80 {
            guard isConstructed else { throw error(.badLength, "indefinite length on a primitive \(tag)", at: offset) }
            return try indefiniteElement(tag: tag, offset: offset, contentStart: index, bound: bound, depth: depth)
        }
        let length = try readDefiniteLength(lengthOctet, at: &index, bound: bound, elementOffset: offset)
        guard length <= bound - index else { throw error(.truncated, "\(tag) longer than the bytes left", at: offset) }
        if tag == .endOfContents {
            // A stray end-of-contents marker outside indefinite content, or one with content.
            throw error(length == 0 ? .badTag : .badLength, "misplaced end-of-contents", at: offset)
        }
        return BERElement(
            tag: tag, isConstructed: isConstructed, offset: offset,
            content: index..<(index + length), end: index + length, depth: depth)
    }

    /// The elements inside a constructed `parent`, at most `countMax` of them
    /// (more is `excess`).
    func children(
        of parent: BERElement, countMax: Int, excess: AppReceiptError.Code, what: String
    ) throws(AppReceiptError) -> [BERElement] {
        guard parent.isConstructed else { throw error(.badTag, "\(what) is not constructed", at: parent.offset) }
        var children: [BERElement] = []
        var index = parent.content.lowerBound
        while index < parent.content.upperBound {
            guard children.count < countMax else {
                throw error(excess, "more than \(countMax) elements in \(what)", at: index)
            }
            let child = try element(at: index, bound: parent.content.upperBound, depth: parent.depth + 1)
            children.append(child)
            index = child.end
        }
        return children
    }

    /// The bytes of an OCTET STRING (or a string type encoded like one):
    /// the content of a primitive element, or the joined segments of a
    /// constructed one (X.690 8.7.3), each segment itself an OCTET STRING.
    /// More than `bytesMax` bytes is `tooLong`.
    func stringBytes(
        of element: BERElement, bytesMax: Int, tooLong: AppReceiptError.Code, what: String
    ) throws(AppReceiptError) -> [UInt8] {
        var joined: [UInt8] = []
        try appendSegments(of: element, to: &joined, bytesMax: bytesMax, tooLong: tooLong, what: what)
        return joined
    }

    /// A reader over `bytes` of a string found in this reader's bytes at
    /// `element`: errors inside it point at the string's offset when it was
    /// split (its bytes were joined from segments).
    func nestedReader(for element: BERElement, bytes nested: [UInt8]) -> BERReader {
        BERReader(bytes: nested, lengthMax: lengthMax, originOffset: originOffset ?? element.offset)
    }

    // MARK: Internal steps

    private func appendSegments(
        of element: BERElement, to joined: inout [UInt8], bytesMax: Int, tooLong: AppReceiptError.Code, what: String
    ) throws(AppReceiptError) {
        guard element.isConstructed else {
            guard element.content.count <= bytesMax - joined.count else {
                throw error(tooLong, "\(what) longer than \(bytesMax) bytes", at: element.offset)
            }
            joined.append(contentsOf: bytes[element.content])
            return
        }
        var index = element.content.lowerBound
        while index < element.content.upperBound {
            let segment = try self.element(at: index, bound: element.content.upperBound, depth: element.depth + 1)
            guard segment.tag == .octetString else {
                throw error(.badTag, "segment of \(what) is \(segment.tag), not OCTET STRING", at: segment.offset)
            }
            try appendSegments(of: segment, to: &joined, bytesMax: bytesMax, tooLong: tooLong, what: what)
            index = segment.end
        }
    }

    /// Identifier octets (X.690 8.1.2): the low form for numbers 0-30, the
    /// high form (0x1F then base-128, no leading zero digit) for 31 and up.
    private func readTag(at index: inout Int, bound: Int) throws(AppReceiptError) -> (BERTag, Bool) {
        let offset = index
        guard index < bound else { throw error(.truncated, "element expected", at: offset) }
        let first = bytes[index]
        index += 1
        let tagClass = BERTag.TagClass(rawValue: first >> 6)!
        let isConstructed = first & 0x20 != 0
        guard first & 0x1F == 0x1F else {
            return (BERTag(tagClass: tagClass, number: UInt32(first & 0x1F)), isConstructed)
        }
        var number: UInt32 = 0
        for digitIndex in 0..<AppReceiptLimits.tagNumberOctetsMax {
            guard index < bound else { throw error(.truncated, "element ends in its tag", at: offset) }
            let digit = bytes[index]
            index += 1
            if digitIndex == 0, digit == 0x80 {
                throw error(.badTag, "tag number with a leading zero digit", at: offset)
            }
            number = number << 7 | UInt32(digit & 0x7F)
            if digit & 0x80 == 0 {
                guard number >= 31 else { throw error(.badTag, "tag number below 31 in the long form", at: offset) }
                return (BERTag(tagClass: tagClass, number: number), isConstructed)
            }
        }
        throw error(.badTag, "tag number longer than \(AppReceiptLimits.tagNumberOctetsMax) octets", at: offset)
    }

    /// Definite length (X.690 8.1.3): short form below 0x80, else 1 to
    /// `lengthOctetsMax` big-endian octets (BER allows leading zeros).
    private func readDefiniteLength(
        _ first: UInt8, at index: inout Int, bound: Int, elementOffset: Int
    ) throws(AppReceiptError) -> Int {
        guard first & 0x80 != 0 else { return Int(first) }
        guard first != 0xFF else { throw error(.badLength, "reserved length octet 0xFF", at: elementOffset) }
        let octetCount = Int(first & 0x7F)
        guard octetCount <= AppReceiptLimits.lengthOctetsMax else {
            throw error(.lengthOverflow, "length of \(octetCount) octets", at: elementOffset)
        }
        guard octetCount <= bound - index else {
            throw error(.truncated, "element ends in its length", at: elementOffset)
        }
        var length = 0
        for _ in 0..<octetCount {
            length = length << 8 | Int(bytes[index])
            index += 1
        }
        guard length <= lengthMax else {
            throw error(.lengthOverflow, "declared length \(length) exceeds \(lengthMax) bytes", at: elementOffset)
        }
        return length
    }

    /// An indefinite-length element: its children up to the end-of-contents
    /// marker (two zero octets), each walked to find where it ends.
    private func indefiniteElement(
        tag: BERTag, offset: Int, contentStart: Int, bound: Int, depth: Int
    ) throws(AppReceiptError) -> BERElement {
        var index = contentStart
        while true {
            guard bound - index >= 2 else {
                throw error(.truncated, "indefinite-length \(tag) without end-of-contents", at: offset)
            }
            if bytes[index] == 0, bytes[index + 1] == 0 {
                return BERElement(
                    tag: tag, isConstructed: true, offset: offset,
                    content: contentStart..<index, end: index + 2, depth: depth)
            }
            if bytes[index] == 0 {
                throw error(.badLength, "end-of-contents marker with content", at: index)
            }
            index = try element(at: index, bound: bound, depth: depth + 1).end
        }
    }
}
