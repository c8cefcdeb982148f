/// One element found by `BERReader`: its tag, form, and where its content
/// lies. For an indefinite-length element `content` excludes the
/// end-of-contents marker and `end` includes it.
struct BERElement: Sendable {
    let tag: BERTag
    let isConstructed: Bool
    /// Offset of the identifier octet.
    let offset: Int
    let content: Range<Int>
    /// Offset just past the element (and past its end-of-contents marker).
    let end: Int
    /// Nesting level: the receipt's outer element is 1.
    let depth: Int
}
