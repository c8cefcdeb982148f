/// Compares Package.swift's targets with docs/ARCHITECTURE.md's module
/// table; pure, so the rules themselves are tested on made-up graphs.
enum ModuleGraphCheck {
    /// Every way the two disagree, one line each (empty when they agree).
    static func violations(targets: [PackageTarget], table: ModuleTable) -> [String] {
        var found: [String] = []
        let listed = targets.filter { !$0.isTest }
        let names = Set(targets.map(\.name))
        for target in listed {
            guard let row = table.row(of: target.name) else {
                found.append("\(target.name): in Package.swift but not in the module table")
                continue
            }
            for dependency in target.dependencies where !row.allowedDependencies.contains(dependency) {
                found.append("\(target.name) depends on \(dependency), which the module table does not allow")
            }
        }
        var seen: Set<String> = []
        for row in table.rows {
            for module in row.modules where !seen.insert(module).inserted {
                found.append("\(module): in more than one row of the module table")
            }
            for module in row.modules where !names.contains(module) {
                found.append("\(module): in the module table but not a target of Package.swift")
            }
            let used = Set(listed.filter { row.modules.contains($0.name) }.flatMap(\.dependencies))
            for allowed in row.allowedDependencies.sorted() where !used.contains(allowed) {
                found.append(
                    "\(row.modules.joined(separator: ", ")): allowed \(allowed), which none of them depends on")
            }
        }
        return found
    }
}
