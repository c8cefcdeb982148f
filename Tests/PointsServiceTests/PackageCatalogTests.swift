import Foundation
@testable import PointsService
import TestSupport
import XCTest

final class PackageCatalogTests: XCTestCase {
    static func shippedCatalog() throws -> PackageCatalog {
        try PackageCatalog.load(path: ShippedConfiguration.packagesFile)
    }

    func testShippedCatalogHoldsThePRDPackages() throws {
        let catalog = try Self.shippedCatalog()
        XCTAssertEqual(
            catalog.packages.map(\.productCode), ["new_user_pack", "starter_pack", "popular_pack", "premium_pack"])
        XCTAssertEqual(catalog.packages.map(\.credits), [60, 100, 210, 415])
        XCTAssertEqual(catalog.packages.map(\.referencePrice), ["0.99", "1.99", "3.99", "7.99"])
        XCTAssertEqual(catalog.packages.map(\.kind), [.starter, .regular, .regular, .regular])
        for package in catalog.packages {
            XCTAssertEqual(package.appStoreProductId, "com.meeyao.qianwen.\(package.productCode)")
            XCTAssertEqual(package.referenceCurrency, "USD")
        }
        XCTAssertEqual(catalog.package(appStoreProductId: "com.meeyao.qianwen.popular_pack")?.credits, 210)
        XCTAssertNil(catalog.package(productCode: "unknown"))
        XCTAssertEqual(
            catalog.purchasable(starterPackPurchased: true).map(\.productCode),
            ["starter_pack", "popular_pack", "premium_pack"])
    }

    func testInvalidCatalogsAreRefused() throws {
        let valid = CreditPackage(
            productCode: "p", appStoreProductId: "com.x.p", kind: .regular, credits: 10, displayName: "P",
            referencePrice: "0.99", referenceCurrency: "USD", sortOrder: 1)
        func with(_ change: (inout [String: Any]) -> Void) -> Data {
            var object: [String: Any] = [
                "productCode": valid.productCode, "appStoreProductId": valid.appStoreProductId, "kind": "regular",
                "credits": 10, "displayName": "P", "referencePrice": "0.99", "referenceCurrency": "USD", "sortOrder": 1,
            ]
            change(&object)
            return try! JSONSerialization.data(withJSONObject: ["packages": [object]])
        }
        XCTAssertNoThrow(try PackageCatalog(jsonData: with { _ in }))
        let broken: [(String, Data)] = [
            ("zero credits", with { $0["credits"] = 0 }),
            ("negative credits", with { $0["credits"] = -1 }),
            ("absurd credits", with { $0["credits"] = 10_000_000_000 }),
            ("unknown kind", with { $0["kind"] = "subscription" }),
            ("bad code", with { $0["productCode"] = "Bad Code" }),
            ("empty store id", with { $0["appStoreProductId"] = "" }),
            ("bad price", with { $0["referencePrice"] = "0.999" }),
            ("bad currency", with { $0["referenceCurrency"] = "usd" }),
            ("missing field", with { $0.removeValue(forKey: "credits") }),
            ("not json", Data("{".utf8)),
            ("no packages", Data(#"{"packages": []}"#.utf8)),
        ]
        for (name, data) in broken {
            XCTAssertThrowsError(try PackageCatalog(jsonData: data), name)
        }
        XCTAssertThrowsError(try PackageCatalog(packages: [valid, valid]), "duplicate codes")
        XCTAssertThrowsError(try PackageCatalog.load(path: "/nonexistent/packages.json"))
    }
}
