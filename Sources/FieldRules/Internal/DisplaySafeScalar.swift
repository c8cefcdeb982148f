/// Which Unicode scalars a masked email may contain: those that print as
/// themselves. Refused are controls (Cc, NUL included), format characters
/// (Cf: bidi embeddings, overrides and isolates, U+200E/U+200F marks,
/// zero-width characters, the BOM, tag characters), every separator (Zs,
/// Zl, Zp: spaces, U+2028, U+2029), private-use, surrogate and unassigned
/// code points. Such characters reorder or hide what support staff read and
/// break log lines.
///
/// The categories come from the toolchain's Unicode tables; the three
/// services are built from one package with one toolchain, so the masker
/// and every checker agree on them.
enum DisplaySafeScalar {
    static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned,
            .spaceSeparator, .lineSeparator, .paragraphSeparator:
            return false
        default:
            return true
        }
    }

    /// A combining mark: safe, but meaningless on its own.
    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
}
