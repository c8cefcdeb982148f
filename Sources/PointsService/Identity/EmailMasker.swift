/// The masked email PointsService keeps on a starter-pack claim for support
/// (`a***@example.com`). The gateway masks (and hashes) the address; this
/// service only checks that what it is asked to store is masked, so an
/// address can never be written here by mistake.
public enum EmailMasker {
    /// True for "***", or one character, then "***@", then anything.
    public static func looksMasked(_ text: String) -> Bool {
        if text == "***" { return true }
        guard let marker = text.range(of: "***@") else { return false }
        return text.distance(from: text.startIndex, to: marker.lowerBound) <= 1
    }
}
