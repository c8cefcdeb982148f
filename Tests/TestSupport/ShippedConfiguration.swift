import Foundation

/// Files of this checkout's `config/` that tests load as shipped.
public enum ShippedConfiguration {
    /// config/packages.json: the package catalog PointsService ships with.
    public static var packagesFile: String {
        ServiceProcess.repositoryRoot.appendingPathComponent("config/packages.json").path
    }
}
