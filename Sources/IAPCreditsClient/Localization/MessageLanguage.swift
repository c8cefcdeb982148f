import Foundation

/// The languages the library's messages exist in. The text tables are Swift
/// (`LocalizedMessages`), not bundle resources, so Linux and every Apple
/// platform show the same words and tests can read them.
public enum MessageLanguage: String, Sendable, Hashable, CaseIterable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"

    /// The first of the user's preferred languages the library has:
    /// Chinese in the Simplified script (zh, zh-Hans, zh-CN, zh-SG, ...) or
    /// English; Traditional Chinese and other languages are skipped, and
    /// English is the fallback.
    public static func preferred(_ identifiers: [String] = Locale.preferredLanguages) -> MessageLanguage {
        for identifier in identifiers {
            let parts = identifier.replacingOccurrences(of: "_", with: "-").lowercased().split(separator: "-").map(
                String.init)
            guard let language = parts.first else { continue }
            if language == "en" { return .english }
            if language == "zh" {
                let traditional = parts.dropFirst().contains { ["hant", "tw", "hk", "mo"].contains($0) }
                if !traditional { return .simplifiedChinese }
            }
        }
        return .english
    }
}
