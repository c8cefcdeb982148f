import Foundation

/// A reader for the block-style YAML subset docs/openapi.yaml is written in:
/// nested mappings by two-space indentation, scalars (plain, quoted, flow
/// text kept raw), `|` literal blocks, and `- ` lists kept as raw items.
/// Anything outside the subset (tabs, odd indentation, stray lines) throws,
/// so the test fails rather than silently skipping part of the document.
indirect enum MiniYAML: Equatable {
    case mapping([(key: String, value: MiniYAML)])
    case scalar(String)
    case list([String])

    struct SyntaxError: Error, CustomStringConvertible {
        let line: Int
        let message: String
        var description: String { "line \(line): \(message)" }
    }

    static func == (lhs: MiniYAML, rhs: MiniYAML) -> Bool {
        switch (lhs, rhs) {
        case (.scalar(let a), .scalar(let b)): return a == b
        case (.list(let a), .list(let b)): return a == b
        case (.mapping(let a), .mapping(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    subscript(key: String) -> MiniYAML? {
        guard case .mapping(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    var keys: [String] {
        guard case .mapping(let members) = self else { return [] }
        return members.map(\.key)
    }

    static func parse(_ text: String) throws -> MiniYAML {
        var lines: [(number: Int, indent: Int, content: String)] = []
        for (offset, raw) in text.components(separatedBy: "\n").enumerated() {
            if raw.contains("\t") { throw SyntaxError(line: offset + 1, message: "tab") }
            let content = raw.drop(while: { $0 == " " })
            if content.isEmpty || content.hasPrefix("#") { continue }
            lines.append((offset + 1, raw.count - content.count, String(content)))
        }
        var reader = Reader(lines: lines)
        let root = try reader.mapping(indent: 0)
        if reader.index < lines.count {
            throw SyntaxError(line: lines[reader.index].number, message: "unexpected indentation")
        }
        return root
    }

    private struct Reader {
        let lines: [(number: Int, indent: Int, content: String)]
        var index = 0

        mutating func mapping(indent: Int) throws -> MiniYAML {
            var members: [(key: String, value: MiniYAML)] = []
            while index < lines.count, lines[index].indent == indent {
                let line = lines[index]
                if line.content.hasPrefix("- ") {
                    throw SyntaxError(line: line.number, message: "list where a key belongs")
                }
                let (key, inlineValue) = try split(line)
                if members.contains(where: { $0.key == key }) {
                    throw SyntaxError(line: line.number, message: "duplicate key \(key)")
                }
                index += 1
                if inlineValue == "|" {
                    var block: [String] = []
                    while index < lines.count, lines[index].indent > indent {
                        block.append(lines[index].content)
                        index += 1
                    }
                    members.append((key, .scalar(block.joined(separator: "\n"))))
                } else if !inlineValue.isEmpty {
                    members.append((key, .scalar(inlineValue)))
                } else if index < lines.count, lines[index].indent > indent {
                    let childIndent = lines[index].indent
                    if lines[index].content.hasPrefix("- ") {
                        members.append((key, list(indent: childIndent)))
                    } else {
                        members.append((key, try mapping(indent: childIndent)))
                    }
                } else {
                    members.append((key, .scalar("")))
                }
            }
            return .mapping(members)
        }

        mutating func list(indent: Int) -> MiniYAML {
            var items: [String] = []
            while index < lines.count, lines[index].indent == indent, lines[index].content.hasPrefix("- ") {
                items.append(String(lines[index].content.dropFirst(2)))
                index += 1
                while index < lines.count, lines[index].indent > indent { index += 1 }
            }
            return .list(items)
        }

        func split(_ line: (number: Int, indent: Int, content: String)) throws -> (String, String) {
            let content = line.content
            let keyEnd: String.Index
            if content.hasPrefix("\"") {
                guard let close = content.dropFirst().firstIndex(of: "\"") else {
                    throw SyntaxError(line: line.number, message: "unterminated quoted key")
                }
                keyEnd = content.index(after: close)
            } else if let separator = content.range(of: ": ") {
                keyEnd = separator.lowerBound
            } else if content.hasSuffix(":") {
                keyEnd = content.index(before: content.endIndex)
            } else {
                throw SyntaxError(line: line.number, message: "not a key")
            }
            var key = String(content[..<keyEnd])
            if key.hasPrefix("\"") { key = String(key.dropFirst().dropLast()) }
            let rest = content[keyEnd...]
            guard rest.hasPrefix(":") else { throw SyntaxError(line: line.number, message: "missing colon") }
            return (key, rest.dropFirst().trimmingCharacters(in: .whitespaces))
        }
    }
}
