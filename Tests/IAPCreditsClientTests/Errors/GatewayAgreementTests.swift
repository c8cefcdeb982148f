import Foundation
import Gateway
import IAPCreditsClient
import XCTest

/// The client knows every code the gateway of this repository can answer
/// (and docs/openapi.yaml lists), with the same retry decision: a code
/// added to the gateway fails here until the client places it.
final class GatewayAgreementTests: XCTestCase {
    func testEveryGatewayCodeIsKnownWithTheSameRetryDecision() {
        for serverCode in Gateway.ProblemCode.allCases {
            let clientCode = IAPCreditsClient.ProblemCode(wireCode: serverCode.wireCode)
            XCTAssertTrue(clientCode.isKnown, "the client does not know \(serverCode.wireCode)")
            let retried = clientCode.policy.disposition == .keepAndRetry
            XCTAssertEqual(
                retried, serverCode.retryable,
                "\(serverCode.wireCode): the gateway says retryable \(serverCode.retryable)")
        }
    }

    func testEveryCodeOfTheOpenAPIDocumentIsKnown() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        guard let codeLine = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "code:" }),
            let enumLine = lines[codeLine...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "enum:" })
        else { return XCTFail("the Problem schema's code enum was not found") }
        var listed: [String] = []
        for line in lines[(enumLine + 1)...] {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("- ") else { break }
            listed.append(String(trimmed.dropFirst(2)))
        }
        XCTAssertGreaterThanOrEqual(listed.count, 20)
        for code in listed {
            XCTAssertTrue(IAPCreditsClient.ProblemCode(wireCode: code).isKnown, "docs/openapi.yaml lists \(code)")
        }
    }
}
