import Foundation

/// An XML element with its namespaces resolved: as much of XML as SAML messages and metadata use. Comments are dropped
/// (exclusive canonicalization without comments never shows them); a DTD is refused (no entity can be declared, so none
/// can expand or reach out), as every SAML stack hardened against XXE does.
final class XMLElement {
    struct Attribute {
        var prefix: String?
        var localName: String
        var namespaceURI: String
        var value: String
        var qualifiedName: String { prefix.map { "\($0):\(localName)" } ?? localName }
    }

    enum Child {
        case element(XMLElement)
        case text(String)
        case instruction(String)
    }

    let prefix: String?
    let localName: String
    private(set) var namespaceURI = ""
    var attributes: [Attribute] = []
    /// The `xmlns` and `xmlns:p` declarations written on this element: prefix ("" for the default) → URI.
    var declarations: [String: String] = [:]
    var children: [Child] = []
    private(set) weak var parent: XMLElement?

    init(prefix: String?, localName: String, parent: XMLElement?) {
        self.prefix = prefix
        self.localName = localName
        self.parent = parent
    }

    var qualifiedName: String { prefix.map { "\($0):\(localName)" } ?? localName }

    /// The namespace a prefix ("" for the default) means here, from this element or the nearest ancestor declaring it.
    func namespace(for prefix: String) -> String? {
        if prefix == "xml" { return XMLElement.xmlNamespace }
        var e: XMLElement? = self
        while let current = e {
            if let uri = current.declarations[prefix] { return uri }
            e = current.parent
        }
        return prefix.isEmpty ? "" : nil
    }

    func attribute(_ name: String) -> String? {
        attributes.first { $0.prefix == nil && $0.localName == name }?.value
    }

    var elements: [XMLElement] {
        children.compactMap { if case .element(let e) = $0 { e } else { nil } }
    }

    func children(_ localName: String, in namespace: String) -> [XMLElement] {
        elements.filter { $0.localName == localName && $0.namespaceURI == namespace }
    }

    func child(_ localName: String, in namespace: String) -> XMLElement? { children(localName, in: namespace).first }

    /// Every element below this one (not itself), in document order.
    var descendants: [XMLElement] { elements.flatMap { [$0] + $0.descendants } }

    /// The element's text, its children's text included.
    var text: String {
        children.map {
            switch $0 {
            case .text(let t): t
            case .element(let e): e.text
            case .instruction: ""
            }
        }.joined()
    }

    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"
    static let xmlnsNamespace = "http://www.w3.org/2000/xmlns/"
}

extension XMLElement {
    /// What is wrong with a document, in words for a page or a log.
    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses a document (UTF-8) and returns its root element.
    static func parse(_ data: Data, maximumBytes: Int = 1 << 20, maximumDepth: Int = 64) throws -> XMLElement {
        guard data.count <= maximumBytes else { throw ParseError(description: "the document is larger than \(maximumBytes) bytes") }
        var parser = XMLParserState(bytes: Self.normalizingLineEnds(Array(data)), maximumDepth: maximumDepth)
        return try parser.document()
    }

    /// XML 1.0 §2.11: CR LF and a lone CR become LF before anything else reads the text.
    private static func normalizingLineEnds(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(13) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 13 {
                out.append(10)
                if i + 1 < bytes.count, bytes[i + 1] == 10 { i += 1 }
            } else {
                out.append(bytes[i])
            }
            i += 1
        }
        return out
    }
}

/// A recursive-descent reader over the bytes of one document.
private struct XMLParserState {
    let bytes: [UInt8]
    let maximumDepth: Int
    var i = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    typealias ParseError = XMLElement.ParseError

    mutating func document() throws -> XMLElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        var root: XMLElement?
        while true {
            skipWhitespace()
            guard i < bytes.count else { break }
            if starts("<?") {
                _ = try instruction()
            } else if starts("<!--") {
                try comment()
            } else if starts("<!") {
                throw ParseError(description: "the document has a DTD or entity declaration, which SAML messages never carry")
            } else if starts("<"), root == nil {
                root = try element(parent: nil, depth: 0)
            } else {
                throw ParseError(description: "there is content after the document's root element")
            }
        }
        guard let root else { throw ParseError(description: "the document has no root element") }
        return root
    }

    private mutating func element(parent: XMLElement?, depth: Int) throws -> XMLElement {
        guard depth < maximumDepth else { throw ParseError(description: "elements are nested more than \(maximumDepth) deep") }
        i += 1  // <
        let name = try self.name()
        var raw: [(String, String)] = []
        var seen = Set<[UInt8]>()
        while true {
            let hadSpace = skipWhitespace()
            guard i < bytes.count else { throw ParseError(description: "the start tag of <\(name)> is not closed") }
            if starts("/>") || starts(">") { break }
            guard hadSpace else { throw ParseError(description: "the attributes of <\(name)> are not separated by spaces") }
            let attribute = try self.name()
            skipWhitespace()
            guard take("=") else { throw ParseError(description: "the attribute \(attribute) of <\(name)> has no value") }
            skipWhitespace()
            let value = try attributeValue()
            guard seen.insert(Array(attribute.utf8)).inserted else {
                throw ParseError(description: "<\(name)> has the attribute \(attribute) twice")
            }
            guard raw.count < 256 else { throw ParseError(description: "<\(name)> has more than 256 attributes") }
            raw.append((attribute, value))
        }
        let (prefix, local) = split(name)
        let e = XMLElement(prefix: prefix, localName: local, parent: parent)
        for (n, v) in raw {
            if n == "xmlns" {
                e.declarations[""] = v
            } else if n.hasPrefix("xmlns:") {
                e.declarations[String(n.dropFirst(6))] = v
            }
        }
        guard let uri = e.namespace(for: prefix ?? "") else {
            throw ParseError(description: "the prefix \(prefix ?? "") of <\(name)> is not declared")
        }
        e.setNamespace(uri)
        for (n, v) in raw where n != "xmlns" && !n.hasPrefix("xmlns:") {
            let (p, l) = split(n)
            // An attribute without a prefix is in no namespace (the default namespace does not apply to attributes).
            guard let ns = p.map({ e.namespace(for: $0) }) ?? "" else {
                throw ParseError(description: "the prefix \(p ?? "") of the attribute \(n) is not declared")
            }
            e.attributes.append(.init(prefix: p, localName: l, namespaceURI: ns, value: v))
        }
        if take("/>") { return e }
        i += 1  // >
        try content(of: e, depth: depth)
        return e
    }

    private mutating func content(of e: XMLElement, depth: Int) throws {
        var text: [UInt8] = []
        func flush() {
            if !text.isEmpty { e.children.append(.text(String(decoding: text, as: UTF8.self))) }
            text = []
        }
        while true {
            guard i < bytes.count else { throw ParseError(description: "<\(e.qualifiedName)> is not closed") }
            if starts("</") {
                i += 2
                let name = try self.name()
                skipWhitespace()
                guard name.utf8.elementsEqual(e.qualifiedName.utf8), take(">") else {
                    throw ParseError(description: "</\(name)> closes <\(e.qualifiedName)>")
                }
                flush()
                return
            } else if starts("<!--") {
                try comment()
            } else if starts("<![CDATA[") {
                i += 9
                guard let end = find("]]>") else { throw ParseError(description: "a CDATA section is not closed") }
                text += bytes[i..<end]
                i = end + 3
            } else if starts("<?") {
                flush()
                e.children.append(.instruction(try instruction()))
            } else if starts("<!") {
                throw ParseError(description: "the document has a declaration inside <\(e.qualifiedName)>")
            } else if starts("<") {
                flush()
                e.children.append(.element(try element(parent: e, depth: depth + 1)))
            } else if bytes[i] == UInt8(ascii: "&") {
                text += Array(try reference().utf8)
            } else {
                text.append(bytes[i])
                i += 1
            }
        }
    }

    private mutating func attributeValue() throws -> String {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
            throw ParseError(description: "an attribute value is not quoted")
        }
        let quote = bytes[i]
        i += 1
        var value: [UInt8] = []
        while true {
            guard i < bytes.count else { throw ParseError(description: "an attribute value is not closed") }
            let b = bytes[i]
            if b == quote {
                i += 1
                return String(decoding: value, as: UTF8.self)
            }
            if b == UInt8(ascii: "<") { throw ParseError(description: "an attribute value contains '<'") }
            if b == UInt8(ascii: "&") {
                value += Array(try reference().utf8)
            } else {
                // XML 1.0 §3.3.3: whitespace characters written literally become spaces (references keep theirs).
                value.append(b == 9 || b == 10 ? 32 : b)
                i += 1
            }
        }
    }

    /// `&name;` or `&#N;` / `&#xN;`: the predefined entities and character references, nothing else.
    private mutating func reference() throws -> String {
        guard let end = find(";"), end - i <= 12 else { throw ParseError(description: "an '&' does not start a reference") }
        let body = String(decoding: bytes[(i + 1)..<end], as: UTF8.self)
        i = end + 1
        switch body {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            let digits = body.hasPrefix("#x") ? body.dropFirst(2) : body.dropFirst()
            let scalar: UInt32? =
                !body.hasPrefix("#") || digits.isEmpty || !digits.allSatisfy(\.isHexDigit)
                ? nil
                : body.hasPrefix("#x") ? UInt32(digits, radix: 16) : UInt32(digits)
            // XML 1.0's Char: tab, newline, carriage return and from space up; no NUL or other control character.
            guard let scalar, scalar == 9 || scalar == 10 || scalar == 13 || scalar >= 32, let u = Unicode.Scalar(scalar) else {
                throw ParseError(description: "the reference &\(body); is not one XML predefines")
            }
            return String(Character(u))
        }
    }

    private mutating func instruction() throws -> String {
        let start = i + 2
        guard let end = find("?>", from: start) else { throw ParseError(description: "a processing instruction is not closed") }
        i = end + 2
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private mutating func comment() throws {
        guard let end = find("-->", from: i + 4) else { throw ParseError(description: "a comment is not closed") }
        i = end + 3
    }

    private mutating func name() throws -> String {
        let start = i
        while i < bytes.count {
            let b = bytes[i]
            if b == 32 || b == 9 || b == 10 || b == UInt8(ascii: "/") || b == UInt8(ascii: ">") || b == UInt8(ascii: "=")
                || b == UInt8(ascii: "<")
            {
                break
            }
            i += 1
        }
        guard i > start else { throw ParseError(description: "a name is missing where a tag or attribute begins") }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    private func split(_ name: String) -> (String?, String) {
        guard let colon = name.firstIndex(of: ":") else { return (nil, name) }
        return (String(name[..<colon]), String(name[name.index(after: colon)...]))
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = i
        while i < bytes.count, bytes[i] == 32 || bytes[i] == 9 || bytes[i] == 10 { i += 1 }
        return i > start
    }

    private func starts(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return i + u.count <= bytes.count && bytes[i..<(i + u.count)].elementsEqual(u)
    }

    private mutating func take(_ s: String) -> Bool {
        guard starts(s) else { return false }
        i += s.utf8.count
        return true
    }

    private func find(_ s: String, from: Int? = nil) -> Int? {
        let u = Array(s.utf8)
        var j = from ?? i
        while j + u.count <= bytes.count {
            if bytes[j] == u[0], bytes[j..<(j + u.count)].elementsEqual(u) { return j }
            j += 1
        }
        return nil
    }
}

extension XMLElement {
    fileprivate func setNamespace(_ uri: String) { namespaceURI = uri }
}
