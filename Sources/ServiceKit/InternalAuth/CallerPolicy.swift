import Foundation
import RPCCore

/// Which callers may call which method: a pure table from method to the
/// caller identities allowed (a subjectAltName DNS name or URI of a verified
/// client certificate, `PeerIdentity.names(_:)`), built at start-up from configuration
/// and consulted by `CallerAuthorization` before any handler runs.
///
/// A method the table does not name is refused to everyone: adding a
/// method to a service without deciding who may call it fails closed.
public struct CallerPolicy: Sendable, Equatable {
    /// Who may call one method.
    public enum Callers: Sendable, Equatable {
        /// Everyone, with or without a certificate (health checks).
        case anyone
        /// Only a caller whose certificate names one of these identities;
        /// an empty set admits nobody.
        case only(Set<String>)
    }

    /// The answer for one call, in order of precedence.
    public enum Decision: Sendable, Equatable {
        case allow
        /// No verified certificate: UNAUTHENTICATED.
        case unauthenticated
        /// A verified certificate that names no allowed identity: PERMISSION_DENIED.
        case permissionDenied
    }

    /// By `:path`.
    private let rules: [String: Callers]

    public init(_ rules: [MethodDescriptor: Callers]) {
        var byPath: [String: Callers] = [:]
        for (method, callers) in rules { byPath[method.path] = callers }
        self.rules = byPath
    }

    /// The rule for `method`; nil means nobody may call it.
    public func callers(of method: MethodDescriptor) -> Callers? { rules[method.path] }

    /// Whether `caller` (nil: no verified certificate) may call `method`.
    public func decide(_ method: MethodDescriptor, caller: PeerIdentity?) -> Decision {
        if case .anyone? = rules[method.path] { return .allow }
        guard let caller else { return .unauthenticated }
        guard case .only(let allowed)? = rules[method.path] else { return .permissionDenied }
        return allowed.contains(where: caller.names) ? .allow : .permissionDenied
    }
}

extension CallerPolicy {
    /// One identity as configured: a DNS name (matched in lower case, as
    /// certificates' DNS names are read) or a URI such as a SPIFFE id
    /// (matched exactly). Refuses empty entries and whitespace or control
    /// characters, naming `setting`.
    public static func identity(_ text: String, setting: String) throws(SettingProblem) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 2048, trimmed.utf8.allSatisfy({ (0x21...0x7e).contains($0) })
        else {
            throw SettingProblem(
                setting, "must be a certificate identity: a DNS name such as payments, or a URI, in printable ASCII",
                because:
                    "services are told apart by the subjectAltName names of their certificates")
        }
        return trimmed.utf8.contains(UInt8(ascii: ":")) ? trimmed : trimmed.lowercased()
    }

    /// A comma-separated list of identities (empty text: none; an empty
    /// entry between commas is a mistake, not nothing).
    public static func identities(_ text: String, setting: String) throws(SettingProblem) -> Set<String> {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { return [] }
        var identities: Set<String> = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            identities.insert(try identity(String(entry), setting: setting))
        }
        return identities
    }
}
