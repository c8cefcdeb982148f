/// An incremental, strict HTTP/1.1 request parser (RFC 9112). Bytes may be
/// fed in any split; complete requests come out in order (pipelining), and
/// the first framing error ends the stream: every request-smuggling
/// ambiguity (CL+TE, conflicting CLs, bare LF, obs-fold, bad chunk sizes)
/// is refused rather than guessed at. Pure: no I/O, no clock.
public struct HTTPRequestParser: Sendable {
    private enum Phase: Sendable, Equatable {
        case head
        case fixedBody(remainingBytes: Int)
        case chunkSizeLine
        case chunkData(remainingBytes: Int)
        case chunkDataEnd
        case trailers
        case failed
    }

    /// The parts of a parsed head that framing decisions need.
    private struct PendingHead: Sendable {
        var method: String
        var target: String
        var version: HTTPVersion
        var headers: HTTPHeaders
        var keepAlive: Bool
    }

    private var phase: Phase = .head
    /// The body limit of each request, by path.
    public let bodyLimits: HTTPBodyLimits
    /// The body limit of the request being read (its path's).
    private var bodyBytesMax: Int
    private var buffer: [UInt8] = []
    /// Start of the unconsumed bytes in `buffer`.
    private var position = 0
    /// Head scanning resumes here (relative to `position`).
    private var headScanOffset = 0
    /// Lines of the head seen so far, CRLF excluded (relative to `position`).
    private var headLines: [Range<Int>] = []
    private var leadingEmptyLineCount = 0
    private var pending: PendingHead?
    private var body: [UInt8] = []
    private var trailerFieldCount = 0
    private var trailerBytes = 0

    /// Requests yielded so far.
    public private(set) var completedRequestCount = 0
    /// Yields `bodyFollows` for each head that announces a body.
    public let reportsHeadsWithBody: Bool

    public init(bodyLimits: HTTPBodyLimits = HTTPBodyLimits(), reportsHeadsWithBody: Bool = false) {
        self.bodyLimits = bodyLimits
        self.reportsHeadsWithBody = reportsHeadsWithBody
        bodyBytesMax = bodyLimits.defaultBytesMax
    }

    /// True when no byte of a next request has been buffered.
    public var isIdle: Bool { phase == .head && position == buffer.count }

    /// True while a request head is incomplete (including before any byte).
    public var isReadingHead: Bool { phase == .head }

    /// True after a failure: the parser ignores everything from then on.
    public var hasFailed: Bool { phase == .failed }

    /// Bytes held: read and not yet consumed, and the body being read.
    public var heldByteCount: Int { buffer.count - position + body.count }

    /// Drops everything held and reads nothing more, as after a failure
    /// (the caller answers for it).
    public mutating func abandon() {
        phase = .failed
        buffer = []
        position = 0
        body = []
        pending = nil
    }

    /// Feeds bytes from the connection and returns what they complete.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [HTTPParserEvent] {
        if phase == .failed { return [] }
        buffer.append(contentsOf: bytes)
        var events: [HTTPParserEvent] = []
        do {
            while try step(&events) {}
        } catch {
            phase = .failed
            buffer = []
            position = 0
            events.append(.failure(error))
            return events
        }
        compact()
        return events
    }

    private var availableBytes: Int { buffer.count - position }

    private mutating func compact() {
        if position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position >= 4096 {
            buffer.removeFirst(position)
            position = 0
        }
    }

    /// Runs one phase as far as the buffer allows; false when it needs more.
    private mutating func step(_ events: inout [HTTPParserEvent]) throws(HTTPRequestError) -> Bool {
        switch phase {
        case .head:
            guard let headLength = try scanHead() else { return false }
            try completeHead(length: headLength, events: &events)
            return true
        case .fixedBody(let remaining):
            let taken = min(remaining, availableBytes)
            body.append(contentsOf: buffer[position..<(position + taken)])
            position += taken
            if remaining - taken > 0 {
                phase = .fixedBody(remainingBytes: remaining - taken)
                return false
            }
            finishRequest(&events)
            return true
        case .chunkSizeLine:
            return try readChunkSizeLine()
        case .chunkData(let remaining):
            let taken = min(remaining, availableBytes)
            body.append(contentsOf: buffer[position..<(position + taken)])
            position += taken
            phase = remaining - taken > 0 ? .chunkData(remainingBytes: remaining - taken) : .chunkDataEnd
            return remaining - taken == 0
        case .chunkDataEnd:
            guard availableBytes >= 2 else {
                if availableBytes == 1 && buffer[position] != HTTPByte.cr {
                    throw HTTPRequestError(.invalidChunkFraming)
                }
                return false
            }
            guard buffer[position] == HTTPByte.cr, buffer[position + 1] == HTTPByte.lf else {
                throw HTTPRequestError(.invalidChunkFraming)
            }
            position += 2
            phase = .chunkSizeLine
            return true
        case .trailers:
            return try readTrailerLine(&events)
        case .failed:
            return false
        }
    }

    // MARK: Head.

    /// Finds the end of the head; returns its length (final CRLF included)
    /// relative to `position`, or nil when more bytes are needed.
    private mutating func scanHead() throws(HTTPRequestError) -> Int? {
        while headLines.isEmpty && headScanOffset == 0 && availableBytes > 0 {
            if buffer[position] == HTTPByte.lf { throw HTTPRequestError(.invalidLineEnding) }
            guard buffer[position] == HTTPByte.cr else { break }
            guard availableBytes >= 2 else { return nil }
            guard buffer[position + 1] == HTTPByte.lf else { throw HTTPRequestError(.invalidLineEnding) }
            position += 2
            leadingEmptyLineCount += 1
            if leadingEmptyLineCount > HTTPServerLimits.leadingEmptyLineCountMax {
                throw HTTPRequestError(.tooManyEmptyLines)
            }
        }
        var lineStart = headLines.last.map { $0.upperBound + 2 } ?? 0
        var index = position + headScanOffset
        while index < buffer.count {
            defer { index += 1 }
            guard buffer[index] == HTTPByte.lf else { continue }
            let relative = index - position
            // The size limits first, as the partial checks below would have
            // applied them had the LF come in a later read: the answer must
            // not depend on how the bytes were split.
            if headLines.isEmpty && relative > HTTPServerLimits.requestLineBytesMax + 1 {
                throw HTTPRequestError(.requestLineTooLong)
            }
            if relative > HTTPServerLimits.headerBlockBytesMax { throw HTTPRequestError(.headerBlockTooLarge) }
            guard relative - 1 >= lineStart, buffer[index - 1] == HTTPByte.cr else {
                throw HTTPRequestError(.invalidLineEnding)
            }
            let line = lineStart..<(relative - 1)
            if headLines.isEmpty && line.count > HTTPServerLimits.requestLineBytesMax {
                throw HTTPRequestError(.requestLineTooLong)
            }
            if relative + 1 > HTTPServerLimits.headerBlockBytesMax {
                throw HTTPRequestError(.headerBlockTooLarge)
            }
            if line.isEmpty {
                headScanOffset = 0
                return relative + 1
            }
            headLines.append(line)
            if headLines.count > HTTPServerLimits.headerFieldCountMax + 1 {
                throw HTTPRequestError(.tooManyHeaderFields)
            }
            lineStart = relative + 1
        }
        headScanOffset = index - position
        // A partial request line may still end with the CR of its CRLF.
        if headLines.isEmpty && availableBytes - lineStart > HTTPServerLimits.requestLineBytesMax + 1 {
            throw HTTPRequestError(.requestLineTooLong)
        }
        if availableBytes > HTTPServerLimits.headerBlockBytesMax {
            throw HTTPRequestError(.headerBlockTooLarge)
        }
        return nil
    }

    private mutating func completeHead(length: Int, events: inout [HTTPParserEvent]) throws(HTTPRequestError) {
        let base = position
        let requestLine = try HTTPRequestLine(
            bytes: buffer[(base + headLines[0].lowerBound)..<(base + headLines[0].upperBound)])
        var headers = HTTPHeaders()
        headers.reserveCapacity(headLines.count - 1)
        for line in headLines.dropFirst() {
            let field = try HTTPFieldLine.parse(buffer[(base + line.lowerBound)..<(base + line.upperBound)])
            headers.add(name: field.name, value: field.value)
        }
        position += length
        // Kept for the next head (a keep-alive connection parses one after another).
        headLines.removeAll(keepingCapacity: true)
        headScanOffset = 0
        leadingEmptyLineCount = 0

        bodyBytesMax = bodyLimits.bytesMax(target: requestLine.target)
        let framing = try HTTPMessageFraming(version: requestLine.version, headers: headers, bodyBytesMax: bodyBytesMax)
        guard HTTPRequestLine.implementedMethods.contains(requestLine.method) else {
            throw HTTPRequestError(.methodNotImplemented)
        }
        pending = PendingHead(
            method: requestLine.method, target: requestLine.target, version: requestLine.version,
            headers: headers, keepAlive: framing.keepAlive)
        body = []
        if reportsHeadsWithBody && framing.body != .none {
            events.append(
                .bodyFollows(HTTPRequestHead(method: requestLine.method, target: requestLine.target, headers: headers)))
        }
        switch framing.body {
        case .none:
            finishRequest(&events)
        case .fixed(let length):
            if framing.expectsContinue { events.append(.continueRequired) }
            phase = .fixedBody(remainingBytes: length)
        case .chunked:
            if framing.expectsContinue { events.append(.continueRequired) }
            phase = .chunkSizeLine
        }
    }

    private mutating func finishRequest(_ events: inout [HTTPParserEvent]) {
        guard let head = pending else { preconditionFailure("finishing a request without a head") }
        events.append(
            .request(
                HTTPRequest(
                    method: head.method, target: head.target, version: head.version,
                    headers: head.headers, body: body, keepAlive: head.keepAlive)))
        completedRequestCount += 1
        pending = nil
        body = []
        trailerFieldCount = 0
        trailerBytes = 0
        phase = .head
    }

    // MARK: Chunked body.

    /// The index of the LF ending the line at `position`, checking its CR.
    private func lineEnd(limit: Int, tooLong: HTTPRequestError.Reason) throws(HTTPRequestError) -> Int? {
        var index = position
        while index < buffer.count {
            if buffer[index] == HTTPByte.lf {
                // The limit first, as when the LF comes in a later read.
                if index - position > limit + 1 { throw HTTPRequestError(tooLong) }
                guard index > position, buffer[index - 1] == HTTPByte.cr else {
                    throw HTTPRequestError(.invalidLineEnding)
                }
                if index - 1 - position > limit { throw HTTPRequestError(tooLong) }
                return index
            }
            index += 1
        }
        if availableBytes > limit + 1 { throw HTTPRequestError(tooLong) }
        return nil
    }

    private mutating func readChunkSizeLine() throws(HTTPRequestError) -> Bool {
        guard let end = try lineEnd(limit: HTTPServerLimits.chunkSizeLineBytesMax, tooLong: .chunkSizeLineTooLong)
        else {
            return false
        }
        let size = try HTTPChunkSizeLine.parse(buffer[position..<(end - 1)])
        position = end + 1
        if size == 0 {
            phase = .trailers
        } else {
            if size > bodyBytesMax - body.count { throw HTTPRequestError(.bodyTooLarge) }
            phase = .chunkData(remainingBytes: size)
        }
        return true
    }

    private mutating func readTrailerLine(_ events: inout [HTTPParserEvent]) throws(HTTPRequestError) -> Bool {
        let remainingBytes = HTTPServerLimits.headerBlockBytesMax - trailerBytes
        guard let end = try lineEnd(limit: remainingBytes, tooLong: .headerBlockTooLarge) else { return false }
        let line = buffer[position..<(end - 1)]
        trailerBytes += line.count + 2
        position = end + 1
        if line.isEmpty {
            finishRequest(&events)
            return true
        }
        // Trailers are validated like fields, then dropped: nothing here
        // needs them, and merging them into headers invites smuggling.
        _ = try HTTPFieldLine.parse(line)
        trailerFieldCount += 1
        if trailerFieldCount > HTTPServerLimits.headerFieldCountMax { throw HTTPRequestError(.tooManyHeaderFields) }
        return true
    }
}
