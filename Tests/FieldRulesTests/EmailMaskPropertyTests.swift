import FieldRules
import TestSupport
import XCTest

/// `masked(_:)` over many generated addresses, hostile ones included: its
/// output always passes the one mask check, stays within 320 bytes, shows
/// at most the first safe character of the local part and otherwise only
/// characters of the domain, and masking a mask changes nothing.
final class EmailMaskPropertyTests: XCTestCase {
    private static let addressCount = 20_000

    /// The pieces addresses are built from: ordinary text and everything
    /// that has broken masks before.
    private static let pieces: [[String]] = [
        ["a", "b", "z", "0", "9", ".", "-", "_", "+", "A", "Z", "x.y"],
        [
            "é", "e\u{301}", "É", "E\u{301}", "ß", "İ", "ı", "Σ", "王", "例子", "пример", "ａ", "\u{FB01}",
            "\u{1100}\u{1161}",
        ],
        [
            "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
            "\u{200E}", "\u{200F}", "\u{61C}",
        ],
        ["\u{200B}", "\u{200C}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{AD}", "\u{180E}", "\u{E0041}", "\u{FE0F}"],
        [
            "\u{0}", "\u{1}", "\t", "\n", "\r", "\u{1B}", "\u{7F}", "\u{85}", "\u{9F}", " ", "\u{A0}", "\u{3000}",
            "\u{2028}", "\u{2029}",
        ],
        ["😀", "👩\u{200D}💻", "🇫🇷", "❤\u{FE0F}", "\u{301}", "\u{20DD}", "\u{E000}", "\u{10FFFD}", "\u{FFFE}", "\u{FFFF}"],
        ["@", "*", "***", "***@", "\"", "\\", "<", ">", "%", "/"],
    ]

    private func piece(_ generator: inout SeededRandom) -> String {
        let group = Self.pieces[Int(generator.next() % UInt64(Self.pieces.count))]
        return group[Int(generator.next() % UInt64(group.count))]
    }

    private func text(_ generator: inout SeededRandom, piecesMax: Int) -> String {
        let count = Int(generator.next() % UInt64(piecesMax + 1))
        return (0..<count).map { _ in piece(&generator) }.joined()
    }

    /// One address: sometimes without "@", sometimes with several, sometimes
    /// with a domain far longer than a mask may be.
    private func address(_ generator: inout SeededRandom) -> String {
        let local = text(&generator, piecesMax: 6)
        switch generator.next() % 10 {
        case 0: return local
        case 1: return local + "@" + String(repeating: piece(&generator), count: 100 + Int(generator.next() % 300))
        case 2: return text(&generator, piecesMax: 3) + "@" + local + "@" + text(&generator, piecesMax: 6)
        default:
            return local + "@" + text(&generator, piecesMax: 8) + "."
                + ["com", "cn", "ФР", ""][Int(generator.next() % 4)]
        }
    }

    func testMaskedAlwaysPassesTheCheckAndRevealsOneCharacterAtMost() {
        let seed = SeededRandom.seed(from: "FIELD_RULES_SEED")
        var generator = SeededRandom(seed: seed)
        var failures = 0
        for _ in 0..<Self.addressCount where failures < 5 {
            let email = address(&generator)
            if let problem = Self.violation(email: email) {
                failures += 1
                XCTFail(
                    "\(problem) for \(email.unicodeScalars.map { String($0.value, radix: 16) }) (FIELD_RULES_SEED=\(seed))"
                )
            }
        }
    }

    /// What is wrong with the mask of `email`, or nil.
    private static func violation(email: String) -> String? {
        let mask = EmailMask.masked(email)
        guard EmailMask.isValid(mask) else { return "invalid mask \(mask.debugDescription)" }
        guard mask.utf8.count <= FieldLimits.emailMaskBytesMax else { return "mask too long" }
        guard (try? EmailMask.validated(mask)) == mask else { return "validated refused the mask" }
        guard Array(EmailMask.masked(mask).utf8) == Array(mask.utf8) else { return "masking the mask changed it" }
        guard Array(EmailMask.repaired(mask).utf8) == Array(mask.utf8) else { return "repairing the mask changed it" }
        if mask.utf8.elementsEqual(EmailMask.placeholder.utf8) { return nil }

        let normalized = EmailNormalization.normalized(email).unicodeScalars
        guard let at = normalized.lastIndex(of: "@") else { return "a mask for an address without @" }
        let local = normalized[..<at]
        let maskScalars = Array(mask.unicodeScalars)
        guard let marker = Self.firstIndex(of: Array("***@".unicodeScalars), in: maskScalars), marker <= 1 else {
            return "more than one character before ***@"
        }
        if marker == 1 {
            guard local.contains(maskScalars[0]) else { return "the hint is not from the local part" }
            guard
                maskScalars[0]
                    == local.first(where: { $0 != "*" && $0 != "@" && $0.properties.generalCategory.isSafeHint })
            else {
                return "the hint is not the first safe character of the local part"
            }
        }
        // The domain of the mask is made of the address's domain only, in
        // order (NFC may have composed neighbours: compare composed forms).
        let shownDomain = Array(maskScalars[(marker + 4)...])
        var domainSafe = String.UnicodeScalarView()
        domainSafe.append(
            contentsOf: normalized[normalized.index(after: at)...].filter { $0.properties.generalCategory.isSafe })
        let expectedDomain = Array(String(domainSafe).precomposedStringWithCanonicalMapping.unicodeScalars)
        guard expectedDomain.starts(with: shownDomain) else { return "the mask shows more than the domain" }
        return nil
    }

    private static func firstIndex(of needle: [Unicode.Scalar], in haystack: [Unicode.Scalar]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}

/// The test's own statement of "safe", written from the categories rather
/// than by calling the module's private predicate.
private extension Unicode.GeneralCategory {
    var isSafe: Bool {
        ![
            .control, .format, .surrogate, .privateUse, .unassigned, .spaceSeparator, .lineSeparator,
            .paragraphSeparator,
        ].contains(self)
    }

    var isSafeHint: Bool { isSafe && ![.nonspacingMark, .spacingMark, .enclosingMark].contains(self) }
}
