import XCTest
@testable import Gateway

/// docs/openapi.yaml must describe exactly the router's routes, with the
/// same methods and authentication, every problem code, and resolvable refs.
final class OpenAPIDocumentTests: XCTestCase {
    private static let httpMethods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    private func document() throws -> (MiniYAML, String) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        return (try MiniYAML.parse(text), text)
    }

    func testVersionAndBearerScheme() throws {
        let (yaml, _) = try document()
        XCTAssertEqual(yaml["openapi"], .scalar("3.1.0"))
        XCTAssertEqual(yaml["components"]?["securitySchemes"]?["bearerAuth"]?["scheme"], .scalar("bearer"))
        XCTAssertEqual(yaml["security"], .list(["bearerAuth: []"]))
    }

    func testEveryRouteAppearsWithTheSameMethodsAndAuthentication() throws {
        let (yaml, _) = try document()
        let paths = try XCTUnwrap(yaml["paths"])
        var documented: Set<String> = []
        var publicOperations: Set<String> = []
        for path in paths.keys {
            let item = try XCTUnwrap(paths[path])
            for method in item.keys {
                XCTAssertTrue(Self.httpMethods.contains(method), "\(path): \(method) is not a method")
                let operation = "\(method.uppercased()) \(path)"
                documented.insert(operation)
                if item[method]?["security"] == .scalar("[]") { publicOperations.insert(operation) }
                XCTAssertNotNil(item[method]?["responses"], "\(operation) has responses")
            }
        }
        let routed = Set(RouteSpec.all.map { "\($0.method) \($0.pattern)" })
        XCTAssertEqual(documented, routed)
        XCTAssertEqual(
            publicOperations,
            Set(RouteSpec.all.filter { !$0.requiresAuthentication }.map { "\($0.method) \($0.pattern)" }))
    }

    func testEveryProblemCodeIsListed() throws {
        let (yaml, _) = try document()
        guard case .list(let codes)? = yaml["components"]?["schemas"]?["Problem"]?["properties"]?["code"]?["enum"]
        else {
            return XCTFail("Problem.code.enum missing")
        }
        XCTAssertEqual(Set(codes), Set(ProblemCode.allCases.map(\.wireCode)))
    }

    func testRequestSchemasMatchTheDecoders() throws {
        let (yaml, _) = try document()
        let schemas = try XCTUnwrap(yaml["components"]?["schemas"])
        XCTAssertEqual(
            Set(schemas["VerifyTransactionRequest"]?["properties"]?.keys ?? []), VerifyTransactionRequestBody.fieldNames
        )
        XCTAssertEqual(
            Set(schemas["NotificationRequest"]?["properties"]?.keys ?? []), NotificationRequestBody.fieldNames)
        XCTAssertEqual(
            Set(schemas["ConsumptionConsentRequest"]?["properties"]?.keys ?? []),
            ConsumptionConsentRequestBody.fieldNames)
        XCTAssertEqual(Set(schemas["ConsumptionConsent"]?["properties"]?.keys ?? []), ["consented", "recorded"])
        XCTAssertEqual(
            Set(schemas["VerifyTransactionResponse"]?["properties"]?.keys ?? []),
            Set(["status", "productCode", "transactionId", "creditsAdded", "newBalance", "ledgerEventId"]))
    }

    func testEveryReferenceResolves() throws {
        let (yaml, text) = try document()
        let pattern = try NSRegularExpression(pattern: ##"\$ref: "#/components/(schemas|responses)/([A-Za-z]+)""##)
        let matches = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
        XCTAssertGreaterThan(matches.count, 10)
        for match in matches {
            let kind = String(text[Range(match.range(at: 1), in: text)!])
            let name = String(text[Range(match.range(at: 2), in: text)!])
            XCTAssertNotNil(yaml["components"]?[kind]?[name], "\(kind)/\(name)")
        }
    }

    func testMiniYAMLRejectsWhatItCannotRead() {
        XCTAssertThrowsError(try MiniYAML.parse("a:\n\tb: 1"))
        XCTAssertThrowsError(try MiniYAML.parse("a: 1\na: 2"))
        XCTAssertThrowsError(try MiniYAML.parse("a:\n    b: 1\n  c: 2"))
        XCTAssertThrowsError(try MiniYAML.parse("just text"))
        XCTAssertEqual(try MiniYAML.parse("a:\n  \"b\": x: y\n").self["a"]?["b"], .scalar("x: y"))
    }
}
