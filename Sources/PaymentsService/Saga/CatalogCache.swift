import Contracts
import Foundation
import Locking

/// The package catalog as PointsService (its owner) serves it, cached so a
/// verify needs no extra call; refreshed when older than `maximumAge`. A
/// stale copy is used while PointsService is unreachable.
final class CatalogCache: Sendable {
    private let points: PointsLedger
    private let maximumAge: Duration
    private let state = Mutex<(packages: [Contracts.Package], fetchedAt: ContinuousClock.Instant?)>(([], nil))

    init(points: PointsLedger, maximumAge: Duration = .seconds(60)) {
        self.points = points
        self.maximumAge = maximumAge
    }

    /// The catalog, fetching it when missing or stale (or always, with
    /// `fresh`: before refusing a product the cached copy does not know,
    /// since a rolling deploy may just have added it).
    func packages(fresh: Bool = false, requestId: String? = nil) async throws(PaymentsError) -> [Contracts.Package] {
        let (cached, fetchedAt) = state.withLock { ($0.packages, $0.fetchedAt) }
        if !fresh, let fetchedAt, ContinuousClock.now - fetchedAt < maximumAge { return cached }
        switch await points.catalog(requestId: requestId) {
        case .success(let packages):
            state.withLock { $0 = (packages, ContinuousClock.now) }
            return packages
        case .failed(let failure):
            guard fetchedAt != nil else { throw .pointsUnavailable(detail: "catalog: \(failure.detail)") }
            return cached
        }
    }

    /// The last catalog seen, without fetching (for notifications about
    /// transactions never verified here).
    var lastKnown: [Contracts.Package] { state.withLock { $0.packages } }
}
