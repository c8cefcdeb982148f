@testable import RPCCore
import XCTest

/// Framing, timeouts, grpc-message encoding, base64 and metadata on the wire.
final class WireFormatTests: XCTestCase {
    func testDeframerReassemblesByteByByte() throws {
        var deframer = MessageDeframer(messageSizeBytesMax: 100)
        let stream = MessageFramer.frame([1, 2, 3]) + MessageFramer.frame([]) + MessageFramer.frame([4])
        var messages: [[UInt8]] = []
        for byte in stream {
            deframer.append([byte])
            while let message = try deframer.next() { messages.append(message) }
        }
        XCTAssertEqual(messages, [[1, 2, 3], [], [4]])
        XCTAssertNoThrow(try deframer.finish())
    }

    func testDeframerRejectsOversizedAnnouncedLengthBeforeBodyArrives() {
        var deframer = MessageDeframer(messageSizeBytesMax: 4)
        deframer.append([0, 0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try deframer.next()) {
            XCTAssertEqual($0 as? MessageDeframer.Failure, .messageTooLarge(announcedBytes: 0xFFFF_FFFF))
        }
        // Once failed, stays failed.
        XCTAssertThrowsError(try deframer.next())
    }

    func testDeframerRejectsInvalidFlag() {
        var deframer = MessageDeframer(messageSizeBytesMax: 4)
        deframer.append([2, 0, 0, 0, 0])
        XCTAssertThrowsError(try deframer.next()) { XCTAssertEqual($0 as? MessageDeframer.Failure, .invalidFlag(2)) }
    }

    func testDeframerFinishReportsTruncation() throws {
        var deframer = MessageDeframer(messageSizeBytesMax: 100)
        deframer.append([0, 0, 0, 0, 5, 1])
        XCTAssertNil(try deframer.next())
        XCTAssertThrowsError(try deframer.finish()) {
            XCTAssertEqual($0 as? MessageDeframer.Failure, .truncated(bufferedBytes: 1))
        }
    }

    /// Found by Fuzz/GRPCFuzz: a length prefix and none of its body, then the
    /// end of the stream, passed as a clean end.
    func testDeframerFinishReportsPrefixWithoutBody() throws {
        var deframer = MessageDeframer(messageSizeBytesMax: 100)
        deframer.append([0, 0, 0, 0, 5])
        XCTAssertNil(try deframer.next())
        XCTAssertThrowsError(try deframer.finish()) {
            XCTAssertEqual($0 as? MessageDeframer.Failure, .truncated(bufferedBytes: 0))
        }
    }

    func testTimeoutEncodingPicksFinestUnitThatFits() {
        XCTAssertEqual(GRPCTimeout.encode(.milliseconds(250)).count <= 9, true)
        XCTAssertEqual(GRPCTimeout.encode(.nanoseconds(5)), "5n")
        XCTAssertEqual(GRPCTimeout.encode(.seconds(1)), "1000000u")
        XCTAssertEqual(GRPCTimeout.encode(.seconds(3600)), "3600000m")
        XCTAssertEqual(GRPCTimeout.encode(.seconds(1_000_000)), "1000000S")
    }

    func testTimeoutRoundTrips() {
        for duration: Duration in [
            .milliseconds(1), .milliseconds(250), .seconds(30), .seconds(86_400), .microseconds(7),
        ] {
            XCTAssertEqual(GRPCTimeout.parse(GRPCTimeout.encode(duration)), duration)
        }
    }

    /// Found with Fuzz/GRPCFuzz's parse-then-encode check: a grpc-timeout
    /// of 7 or more digits of hours, encoded again, overflowed Int64
    /// nanoseconds and trapped.
    func testTimeoutEncodingOfHugeDurationsSaturatesInHours() {
        let hours: Int64 = 9_999_999
        XCTAssertEqual(GRPCTimeout.encode(.seconds(hours * 3600)), "9999999H")
        XCTAssertEqual(GRPCTimeout.parse(GRPCTimeout.encode(.seconds(hours * 3600))), .seconds(hours * 3600))
        XCTAssertEqual(
            GRPCTimeout.encode(.seconds(hours * 3600) + .nanoseconds(1)), "10000000H", "rounded up, never shortened")
        XCTAssertEqual(GRPCTimeout.encode(.seconds(Int64.max)), "99999999H")
        XCTAssertEqual(GRPCTimeout.encode(.seconds(8_999_999_999)), "2500000H", "just below the switch to whole hours")
    }

    func testTimeoutParseRejectsMalformed() {
        for text in ["", "m", "10", "10x", "123456789m", "-1m", "1.5S"] {
            XCTAssertNil(GRPCTimeout.parse(text), text)
        }
        XCTAssertEqual(GRPCTimeout.parse("2H"), .seconds(7200))
        XCTAssertEqual(GRPCTimeout.parse("3M"), .seconds(180))
    }

    func testGRPCMessagePercentEncodingRoundTrips() {
        let text = "a b%c\u{7F}\n✓ ok"
        let encoded = GRPCMessageEncoding.encode(text)
        XCTAssertEqual(encoded, "a b%25c%7F%0A%E2%9C%93 ok")
        XCTAssertEqual(GRPCMessageEncoding.decode(encoded), text)
        XCTAssertEqual(GRPCMessageEncoding.decode("bad %zz and %4"), "bad %zz and %4")
    }

    /// An HTTP/2 field value may not start or end with a space (nghttp2
    /// drops the field, and the status text with it): edge spaces are escaped.
    func testGRPCMessageEdgeSpacesAreEscaped() {
        XCTAssertEqual(GRPCMessageEncoding.encode(" not found  "), "%20not found%20%20")
        XCTAssertEqual(GRPCMessageEncoding.encode("   "), "%20%20%20")
        XCTAssertEqual(GRPCMessageEncoding.encode("a b"), "a b")
        for text in [" not found  ", "   ", " ", "x "] {
            XCTAssertEqual(GRPCMessageEncoding.decode(GRPCMessageEncoding.encode(text)), text)
        }
    }

    func testBase64EncodesPaddedAndDecodesUnpadded() {
        XCTAssertEqual(Base64.encode([]), "")
        XCTAssertEqual(Base64.encode([0xFF]), "/w==")
        XCTAssertEqual(Base64.encode([1, 2]), "AQI=")
        XCTAssertEqual(Base64.encode([1, 2, 3]), "AQID")
        XCTAssertEqual(Base64.decode("/w"), [0xFF])
        XCTAssertEqual(Base64.decode("/w=="), [0xFF])
        XCTAssertEqual(Base64.decode("AQI"), [1, 2])
        XCTAssertNil(Base64.decode("A"))
        XCTAssertNil(Base64.decode("A*B="))
        let bytes = (0..<256).map { UInt8($0) }
        XCTAssertEqual(Base64.decode(Base64.encode(bytes)), bytes)
    }

    func testMetadataWireFieldsSkipReservedAndEncodeBinary() throws {
        var metadata = Metadata()
        metadata.addString("v", forKey: "X-Mixed-Case")
        metadata.addString("nope", forKey: "grpc-status")
        metadata.addString("nope", forKey: "content-type")
        metadata.addBinary([0, 1], forKey: "x-b-bin")
        metadata.addString("bad\nvalue", forKey: "x-bad")
        let fields = metadata.wireFields()
        XCTAssertEqual(
            fields,
            [HTTPHeaderField(name: "x-mixed-case", value: "v"), HTTPHeaderField(name: "x-b-bin", value: "AAE=")])
        let decoded = try Metadata.fromWire(fields + [HTTPHeaderField(name: "x-c-bin", value: "AQ, Ag")])
        XCTAssertEqual(decoded[stringValues: "x-mixed-case"], ["v"])
        XCTAssertEqual(decoded[binaryValues: "x-b-bin"], [[0, 1]])
        XCTAssertEqual(decoded[binaryValues: "x-c-bin"], [[1], [2]])
        var spaced = Metadata()
        spaced.addString("  padded value ", forKey: "x-a")
        spaced.addString("   ", forKey: "x-b")
        XCTAssertEqual(
            spaced.wireFields(),
            [HTTPHeaderField(name: "x-a", value: "padded value"), HTTPHeaderField(name: "x-b", value: "")],
            "no field value with edge whitespace (an HTTP/2 peer drops it)")
    }

    /// Found by Fuzz/GRPCFuzz: "grpC-x" passed the (case-sensitive)
    /// reserved check, then was stored lower-cased as metadata "grpc-x".
    func testMetadataFromWireSkipsReservedNamesInAnyCase() throws {
        let fields = [
            HTTPHeaderField(name: "Grpc-Status", value: "0"), HTTPHeaderField(name: "grpC-swift", value: "x"),
            HTTPHeaderField(name: "Content-Type", value: "text/plain"),
            HTTPHeaderField(name: "X-Trace-BIN", value: "AQ"),
        ]
        let decoded = try Metadata.fromWire(fields)
        XCTAssertEqual(decoded.map(\.key), ["x-trace-bin"])
        XCTAssertEqual(decoded[binaryValues: "x-trace-bin"], [[1]])
    }

    /// Keys are stored lower-cased; the copy is skipped only where
    /// lower-casing would not change the name.
    func testMetadataKeysAreLowerCasedAsBefore() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abzAZ09-_.:@[`{\u{00C9}\u{00E9}\u{0130}\u{212A}".unicodeScalars)
        for _ in 0..<2_000 {
            var name = ""
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                name.unicodeScalars.append(alphabet.randomElement(using: &generator)!)
            }
            XCTAssertEqual(Metadata.lowercasedKey(name), name.lowercased(), name)
        }
        var metadata = Metadata()
        metadata.addString("v", forKey: "X-Trace")
        metadata.addString("w", forKey: "x-trace")
        XCTAssertEqual(metadata[stringValues: "X-TRACE"], ["v", "w"])
        XCTAssertEqual(metadata.map(\.key), ["x-trace", "x-trace"])
    }

    func testMethodDescriptorPath() {
        let method = MethodDescriptor(service: "points.v1.Points", method: "Grant")
        XCTAssertEqual(method.path, "/points.v1.Points/Grant")
        XCTAssertEqual(MethodDescriptor(path: "/points.v1.Points/Grant"), method)
        XCTAssertNil(MethodDescriptor(path: "points.v1.Points/Grant"))
        XCTAssertNil(MethodDescriptor(path: "/a/b/c"))
        XCTAssertNil(MethodDescriptor(path: "//b"))
    }

    func testAllSeventeenCodes() {
        XCTAssertEqual(RPCError.Code.all.count, 17)
        XCTAssertEqual(RPCError.Code.unauthenticated.rawValue, 16)
        XCTAssertEqual(RPCError.Code.deadlineExceeded.description, "DEADLINE_EXCEEDED")
    }

    func testErrorMappingFromArbitraryErrors() {
        struct Opaque: Error {}
        XCTAssertEqual(RPCError.from(Opaque()).code, .unknown)
        XCTAssertEqual(RPCError.from(CancellationError()).code, .cancelled)
        XCTAssertEqual(RPCError.from(RPCError(code: .aborted, message: "x")).code, .aborted)
    }
}
