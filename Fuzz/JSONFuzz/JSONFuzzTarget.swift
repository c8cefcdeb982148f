// libFuzzer entry point over the strict JSON parser and writer. Not a
// SwiftPM target: scripts/fuzz.sh compiles it with Sources/StrictJSON and
// Fuzz/Support into one module named StrictJSON, with
// `-sanitize=fuzzer,address`.
//
// Input: the whole input is one document (seeds in Fuzz/JSONFuzz/seeds/ are
// real request bodies and JWS payloads). Oracles:
//   - round trip: a parsed value, written and parsed again, is the same
//     value (compared scalar by scalar and member by member in order, not
//     with String's canonical equivalence), and writing that gives the
//     same bytes (the writer is a fixed point);
//   - the writer's output is valid UTF-8, at most 6 bytes per input byte
//     (the longest escape), and accepted by a parser with the same depth;
//   - limits: a smaller documentBytesMax refuses with documentTooLarge,
//     nesting beyond depthMax is refused, and a refusal's byte offset lies
//     within the document;
//   - JSONObject refuses a key only when the same scalars are already there.

/// Equality without Unicode canonical equivalence: the parser must keep
/// exactly the scalars it read.
func identical(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.number(let a), .number(let b)): return a.text.utf8.elementsEqual(b.text.utf8)
    case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
    case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy(identical)
    case (.object(let a), .object(let b)):
        return a.count == b.count
            && zip(a.members, b.members).allSatisfy {
                $0.key.unicodeScalars.elementsEqual($1.key.unicodeScalars) && identical($0.value, $1.value)
            }
    default: return false
    }
}

/// Nesting depth of arrays and objects (a scalar is 0).
func depth(_ value: JSONValue) -> Int {
    switch value {
    case .array(let elements): return 1 + (elements.map(depth).max() ?? 0)
    case .object(let object): return 1 + (object.members.map { depth($0.value) }.max() ?? 0)
    default: return 0
    }
}

func checkRoundTrip(_ value: JSONValue, input: [UInt8], parser: StrictJSONParser) {
    require(depth(value) <= parser.depthMax, "a document deeper than depthMax was accepted")
    let written = JSONWriter.bytes(of: value)
    require(String(validating: written, as: UTF8.self) != nil, "the writer produced invalid UTF-8")
    require(written.count <= 6 * input.count, "the writer's output outgrew the longest escape")
    let reparser = StrictJSONParser(documentBytesMax: max(written.count, 1), depthMax: parser.depthMax)
    let reparsed: JSONValue
    do {
        reparsed = try reparser.parse(written)
    } catch {
        return require(false, "the writer's output does not parse: \(error)")
    }
    require(identical(reparsed, value), "parse(write(value)) is not the value")
    require(reparsed == value, "parse(write(value)) != value")
    require(JSONWriter.bytes(of: reparsed) == written, "the writer is not a fixed point")
    if case .number(let number) = value {
        require(JSONNumber(number.text) == number, "JSONNumber(text:) refuses a parsed number")
        if let integer = number.int64Value {
            require(String(integer) == number.text || number.text.hasPrefix("-0"), "int64Value differs from the text")
        }
    }
}

/// JSONObject.insert: refused exactly when a member with the same scalars exists.
func checkObjectKeys(_ input: [UInt8]) {
    let keys = input.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(80).map {
        String(decoding: $0, as: UTF8.self)
    }
    var object = JSONObject()
    var seen: [[Unicode.Scalar]] = []
    for key in keys {
        let scalars = Array(key.unicodeScalars)
        let duplicate = seen.contains(scalars)
        require(
            object.insert(key, .null) == !duplicate,
            duplicate ? "a repeated key was accepted" : "a key was refused although no member has its scalars")
        if !duplicate { seen.append(scalars) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let parser = StrictJSONParser(documentBytesMax: 64 * 1024, depthMax: 8)
    do {
        let value = try parser.parse(input)
        checkRoundTrip(value, input: input, parser: parser)
        if size > 1 {
            let small = StrictJSONParser(documentBytesMax: size - 1, depthMax: parser.depthMax)
            do {
                _ = try small.parse(input)
                require(false, "a document over documentBytesMax was accepted")
            } catch {
                require(error.kind == .documentTooLarge, "over documentBytesMax but refused for \(error.kind)")
            }
        }
    } catch {
        require(error.byteOffset >= 0 && error.byteOffset <= size, "an error offset outside the document")
        require(error.kind != .documentTooLarge, "documentTooLarge within the limit")
    }
    checkObjectKeys(input)
    return 0
}
