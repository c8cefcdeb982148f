import CryptoPrimitives
import Foundation

/// FOR LOCAL TESTING ONLY. A throw-away PKI shaped like Apple's (root ->
/// intermediate with OID 1.2.840.113635.100.6.2.1 -> leaf with
/// 1.2.840.113635.100.6.11.1) that signs payloads as compact ES256 JWS with
/// `x5c` [leaf, intermediate, root], and can answer OCSP requests. Used by
/// the dev `demo` command and by tests; a verifier trusts it only when its
/// `rootDER` is configured as a trusted root. Never deploy its root.
public final class LocalTestingCertificateAuthority: @unchecked Sendable {
    /// What to build; the defaults give a valid Apple-like chain.
    public struct Options: Sendable {
        /// Which marker extension a certificate carries.
        public enum MarkerOID: Sendable {
            case apple
            case omitted
            /// A neighbouring Apple OID that must not be accepted.
            case wrong
        }

        /// "P-256" or "P-384".
        public var rootCurve = "P-256"
        /// "P-256" for a valid ES256 leaf; anything else makes the leaf unusable.
        public var leafCurve = "P-256"
        public var leafOID = MarkerOID.apple
        public var intermediateOID = MarkerOID.apple
        /// Validity of all three certificates, seconds since 1970.
        public var validFromSeconds: Int64
        public var validUntilSeconds: Int64
        /// Overrides the leaf's validity (e.g. an expired leaf).
        public var leafValidFromSeconds: Int64?
        public var leafValidUntilSeconds: Int64?
        /// Sign JWS with a key that is not the leaf's.
        public var signWithWrongKey = false
        /// Adds an AIA OCSP URL to leaf and intermediate.
        public var ocspResponderURL: String?
        /// Adds subject/authority key identifiers (Apple's real PKI has them).
        public var includeKeyIdentifiers = true

        public init(nowSeconds: Int64 = Int64(Date().timeIntervalSince1970)) {
            validFromSeconds = nowSeconds - 86_400
            validUntilSeconds = nowSeconds + 365 * 86_400
        }
    }

    /// What an OCSP answer from `ocspResponse(requestDER:answer:)` says.
    public enum OCSPAnswer: Sendable {
        case good
        case revoked
        case unknown
        /// Signed by a key unrelated to the chain.
        case signedByStranger
        /// thisUpdate/nextUpdate both in the past.
        case stale
        /// GOOD, thisUpdate a week old and no nextUpdate (a replayed answer).
        case oldWithoutNextUpdate
        /// Responder status `tryLater`, no basic response.
        case tryLater
    }

    public let options: Options
    private let rootKey: ECPrivateKey
    private let intermediateKey: ECPrivateKey
    private let leafKey: ECPrivateKey
    private let strangerKey: ECPrivateKey
    private let root: X509Certificate
    private let intermediate: X509Certificate
    private let leaf: X509Certificate
    private let stranger: X509Certificate

    public init(options: Options = Options()) throws(LocalTestingCertificateAuthorityError) {
        self.options = options
        guard let rootKey = Self.generateKey(curveName: options.rootCurve),
            let intermediateKey = Self.generateKey(curveName: "P-256"),
            let leafKey = Self.generateKey(curveName: options.leafCurve),
            let strangerKey = Self.generateKey(curveName: "P-256")
        else { throw .keyGenerationFailed }
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        self.leafKey = leafKey
        self.strangerKey = strangerKey
        let builder = CertificateBuilder(options: options)
        guard
            let root = builder.make(
                commonName: "IAP Local Testing Root", serial: 1, key: rootKey, issuer: nil, issuerKey: rootKey,
                role: .root),
            let intermediate = builder.make(
                commonName: "IAP Local Testing Intermediate", serial: 2, key: intermediateKey, issuer: root,
                issuerKey: rootKey, role: .intermediate),
            let leaf = builder.make(
                commonName: "IAP Local Testing Leaf", serial: 3, key: leafKey, issuer: intermediate,
                issuerKey: intermediateKey, role: .leaf)
        else { throw .certificateCreationFailed }
        var strangerOptions = options
        strangerOptions.includeKeyIdentifiers = false
        guard
            let stranger = CertificateBuilder(options: strangerOptions).make(
                commonName: "IAP Local Testing Stranger", serial: 4, key: strangerKey, issuer: nil,
                issuerKey: strangerKey, role: .root)
        else { throw .certificateCreationFailed }
        self.stranger = stranger
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
    }

    /// The root certificate, DER: configure it as a trusted root.
    public var rootDER: Data { Data(root.derBytes) }
    public var intermediateDER: Data { Data(intermediate.derBytes) }
    public var leafDER: Data { Data(leaf.derBytes) }

    /// The root certificate as PEM.
    public var rootPEM: String { PEMBlock(label: "CERTIFICATE", der: root.derBytes).text }

    /// Restores a CA saved by `exportPEM()` (its four certificates and keys),
    /// so a local demo can keep one trusted root across runs. `options`
    /// only matters for signing and OCSP behaviour (validity comes from the
    /// saved certificates).
    public init(importingPEM text: String, options: Options = Options()) throws(LocalTestingCertificateAuthorityError) {
        guard let blocks = try? PEMBlock.blocks(in: text) else { throw .importFailed }
        let certificates = blocks.filter { $0.label == "CERTIFICATE" }.compactMap { X509Certificate(der: $0.der) }
        let keys = blocks.filter { $0.label == "EC PRIVATE KEY" }.compactMap { try? ECPrivateKey(sec1DER: $0.der) }
        guard certificates.count == 4, keys.count == 4 else { throw .importFailed }
        self.options = options
        root = certificates[0]
        intermediate = certificates[1]
        leaf = certificates[2]
        stranger = certificates[3]
        rootKey = keys[0]
        intermediateKey = keys[1]
        leafKey = keys[2]
        strangerKey = keys[3]
    }

    /// The whole CA, private keys included, as PEM text for
    /// `init(importingPEM:)`. Local testing only: whoever has it can sign
    /// "Apple" data for any verifier trusting this root.
    public func exportPEM() throws(LocalTestingCertificateAuthorityError) -> String {
        var text = ""
        for certificate in [root, intermediate, leaf, stranger] {
            text += PEMBlock(label: "CERTIFICATE", der: certificate.derBytes).text
        }
        for key in [rootKey, intermediateKey, leafKey, strangerKey] {
            guard let der = try? key.sec1DER() else { throw .exportFailed }
            text += PEMBlock(label: "EC PRIVATE KEY", der: der).text
        }
        return text
    }

    /// A key on "P-256" or "P-384"; nil for any other name or when OpenSSL fails.
    private static func generateKey(curveName: String) -> ECPrivateKey? {
        guard let curve = ECCurve(rawValue: curveName) else { return nil }
        return try? ECPrivateKey(generating: curve)
    }

    /// The standard JWS header: ES256 with `x5c` [leaf, intermediate, root].
    public var standardHeaderJSON: String {
        let chain = [leaf, intermediate, root].map { "\"\(StrictBase64.encodeStandard($0.derBytes))\"" }
        return "{\"alg\":\"ES256\",\"x5c\":[\(chain.joined(separator: ","))]}"
    }

    /// `x5c` entries (standard base64) in order leaf, intermediate, root.
    public var certificateChainBase64: [String] {
        [leaf, intermediate, root].map { StrictBase64.encodeStandard($0.derBytes) }
    }

    /// Signs `payloadJSON` as a compact JWS with the standard header.
    public func sign(payloadJSON: String) throws(LocalTestingCertificateAuthorityError) -> String {
        try sign(headerJSON: standardHeaderJSON, payloadJSON: payloadJSON)
    }

    /// Signs arbitrary header and payload texts (tests build malformed tokens with it).
    public func sign(headerJSON: String, payloadJSON: String) throws(LocalTestingCertificateAuthorityError) -> String {
        try sign(headerBytes: Array(headerJSON.utf8), payloadBytes: Array(payloadJSON.utf8))
    }

    /// Signs raw header and payload bytes (may be non-UTF-8, for tests).
    public func sign(headerBytes: [UInt8], payloadBytes: [UInt8]) throws(LocalTestingCertificateAuthorityError)
        -> String
    {
        let signingInput = StrictBase64.encodeURL(headerBytes) + "." + StrictBase64.encodeURL(payloadBytes)
        let key = options.signWithWrongKey ? strangerKey : leafKey
        guard let signature = try? ES256SigningKey(privateKey: key).sign(Array(signingInput.utf8)) else {
            throw .signingFailed
        }
        return signingInput + "." + StrictBase64.encodeURL(signature)
    }

    /// A DER OCSP response to a DER OCSP request for the leaf or the
    /// intermediate, signed by that certificate's issuer. nil if the request
    /// names neither.
    public func ocspResponse(
        requestDER: [UInt8], answer: OCSPAnswer = .good, nowSeconds: Int64 = Int64(Date().timeIntervalSince1970)
    ) -> [UInt8]? {
        OCSPResponder(
            leaf: leaf, intermediate: intermediate, root: root,
            intermediateKey: intermediateKey, rootKey: rootKey, strangerKey: strangerKey,
            strangerCertificate: stranger
        )
        .respond(requestDER: requestDER, answer: answer, nowSeconds: nowSeconds)
    }
}

/// Why the local testing CA could not be built or could not sign.
public enum LocalTestingCertificateAuthorityError: Error, Equatable, Sendable {
    case keyGenerationFailed
    case certificateCreationFailed
    case signingFailed
    /// `exportPEM()` could not encode a key.
    case exportFailed
    /// `init(importingPEM:)` did not find four certificates and four keys.
    case importFailed
}
