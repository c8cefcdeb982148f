import IAPCreditsClient
import XCTest

/// PRD 12.3: packages ↔ StoreKit products.
final class PackageOffersTests: XCTestCase {
    func testEveryPackageGetsItsProductAndStoreKitsPrice() {
        let offers = PackageOffers.match(packages: Fixtures.packages, products: Fixtures.products.reversed())
        XCTAssertEqual(
            offers.offers.map(\.productCode), ["new_user_pack", "starter_pack", "popular_pack", "premium_pack"],
            "the gateway's order")
        for offer in offers.offers {
            XCTAssertEqual(offer.product?.id, offer.appStoreProductId)
            XCTAssertTrue(offer.isAvailable)
        }
        XCTAssertEqual(
            offers.offer(productCode: "starter_pack")?.displayPrice, "¥12.00",
            "StoreKit's localized price, not the backend's 1.99 USD")
        XCTAssertEqual(offers.productCode(forAppStoreProductId: "com.meeyao.qianwen.premium_pack"), "premium_pack")
        XCTAssertNil(offers.productCode(forAppStoreProductId: "com.other.app.pack"))
    }

    func testAPackageStoreKitDoesNotSellIsUnavailableWithoutAPrice() {
        let offers = PackageOffers.match(packages: Fixtures.packages, products: Array(Fixtures.products.dropFirst(2)))
        let starter = offers.offer(productCode: "starter_pack")
        XCTAssertEqual(starter?.isAvailable, false)
        XCTAssertNil(starter?.displayPrice, "the reference price is never offered as the price to pay")
        XCTAssertEqual(offers.offer(productCode: "popular_pack")?.isAvailable, true)
        XCTAssertEqual(
            PackageOffers.match(packages: Fixtures.packages, products: []).offers.filter(\.isAvailable).count, 0)
    }

    func testProductsNoPackageNamesAreIgnored() {
        let stray = StoreProduct(
            id: "com.meeyao.qianwen.retired_pack", displayName: "Old", displayPrice: "¥1.00", price: 1,
            currencyCode: "CNY")
        let offers = PackageOffers.match(packages: Fixtures.packages, products: Fixtures.products + [stray])
        XCTAssertEqual(offers.offers.count, 4)
        XCTAssertNil(offers.productCode(forAppStoreProductId: stray.id))
    }

    func testTwoPackagesNamingOneProductKeepTheFirst() {
        let twin = CreditPackage(
            productCode: "starter_pack_copy", appStoreProductId: "com.meeyao.qianwen.starter_pack", kind: .regular,
            credits: 999, displayName: "Copy", price: "1.99", currency: "USD")
        let offers = PackageOffers.match(packages: Fixtures.packages + [twin], products: Fixtures.products)
        XCTAssertEqual(offers.productCode(forAppStoreProductId: "com.meeyao.qianwen.starter_pack"), "starter_pack")
        XCTAssertNil(offers.offer(productCode: "starter_pack_copy"))
        XCTAssertEqual(PackageOffers.productIDs(of: Fixtures.packages + [twin]).count, 4)
    }

    func testStarterPackEligibilityFollowsTheList() {
        XCTAssertTrue(
            PackageOffers.match(packages: Fixtures.packages, products: Fixtures.products).isStarterPackEligible)
        let afterBuying = PackageOffers.match(
            packages: Array(Fixtures.packages.dropFirst()), products: Fixtures.products)
        XCTAssertFalse(afterBuying.isStarterPackEligible)
        XCTAssertEqual(afterBuying.offers.first?.productCode, "starter_pack")
    }

    func testPackagesDecodeFromTheGatewaysJSON() throws {
        let json = """
            {"packages":[{"productCode":"new_user_pack","appStoreProductId":"com.meeyao.qianwen.new_user_pack","kind":"starter",
            "credits":60,"displayName":"New user pack","price":"0.99","currency":"USD"},
            {"productCode":"x","appStoreProductId":"com.x","kind":"subscription","credits":1,"displayName":"X","price":"1","currency":"USD","extra":true}]}
            """
        let packages = try GatewayRoutes.packages.decode(Data(json.utf8))
        XCTAssertEqual(packages.first, Fixtures.packages.first)
        XCTAssertEqual(packages.last?.kind, .unrecognized("subscription"))
    }
}
