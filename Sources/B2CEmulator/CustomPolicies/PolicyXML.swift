import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of a custom-policy file: its local name, attributes, element children and text, and the line it starts on
/// (for the errors that name it).
final class PolicyNode: @unchecked Sendable {
    let name: String
    var attributes: [String: String]
    var children: [PolicyNode] = []
    var text = ""
    let line: Int

    init(name: String, attributes: [String: String], line: Int) {
        (self.name, self.attributes, self.line) = (name, attributes, line)
    }

    subscript(attribute: String) -> String? { attributes[attribute] }

    func child(_ name: String) -> PolicyNode? { children.first { $0.name == name } }
    func all(_ name: String) -> [PolicyNode] { children.filter { $0.name == name } }
    /// The element at a path of names below this one (`BuildingBlocks/ClaimsSchema`).
    func at(_ path: String) -> PolicyNode? {
        path.split(separator: "/").reduce(self as PolicyNode?) { node, name in node?.child(String(name)) }
    }
    /// Every element below this one (depth first), this one included.
    var descendants: [PolicyNode] { [self] + children.flatMap(\.descendants) }
    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// The element in the error messages' words: `<TechnicalProfile Id="login-NonInteractive">` (line 601).
    var described: String {
        let id = ["Id", "Key", "ClaimTypeReferenceId", "ReferenceId", "Order"].first { attributes[$0] != nil }
        return "<\(name)\(id.map { " \($0)=\"\(attributes[$0]!)\"" } ?? "")> (line \(line))"
    }

    func copy() -> PolicyNode {
        let n = PolicyNode(name: name, attributes: attributes, line: line)
        n.children = children.map { $0.copy() }
        n.text = text
        return n
    }
}

/// A policy file read with FoundationXML's parser (libxml2, the maintained parser the platform ships), hardened as the
/// tenant reads anything a stranger may upload: no DTD (so no entity is declared, expanded or fetched; external entities
/// are off besides), at most `maximumBytes`, `maximumDepth` levels and `maximumElements` elements.
enum PolicyXML {
    /// The emulator's choices (B2C documents no limits of its own for a policy file): the starter pack's largest file is
    /// about 80 KB and 12 levels deep.
    static let maximumBytes = 1 << 20
    static let maximumDepth = 40
    static let maximumElements = 50_000

    struct Failure: Error, Equatable {
        var reason: String
        var line: Int?
    }

    static func parse(_ data: Data) throws -> PolicyNode {
        guard data.count <= maximumBytes else {
            throw Failure(reason: "the file has \(data.count) bytes; a policy file may have at most \(maximumBytes)")
        }
        // A DTD is where entities are declared: a policy never needs one, and without it none can expand or reach out.
        if data.range(of: Data("<!DOCTYPE".utf8)) != nil || data.range(of: Data("<!ENTITY".utf8)) != nil {
            throw Failure(reason: "the file declares a DTD (<!DOCTYPE or <!ENTITY>); a policy file may not")
        }
        let reader = Reader()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = true
        parser.delegate = reader
        let ok = parser.parse()
        if let failure = reader.failure { throw failure }
        // libxml2 recovers from some errors (a tag left open) and still says parse() succeeded: any error is a refusal.
        guard ok, parser.parserError == nil, reader.stack.isEmpty, let root = reader.root else {
            let line = parser.lineNumber
            let why = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "not well-formed"
            throw Failure(reason: "the file is not well-formed XML (\(Self.plain(why)))", line: line > 0 ? line : nil)
        }
        return root
    }

    /// libxml2's message without its error-domain decoration.
    private static func plain(_ s: String) -> String {
        s.replacingOccurrences(of: "The operation could not be completed. ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var root: PolicyNode?
        var stack: [PolicyNode] = []
        var count = 0
        var failure: Failure?

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            count += 1
            guard stack.count < PolicyXML.maximumDepth, count <= PolicyXML.maximumElements else {
                failure = Failure(
                    reason: stack.count >= PolicyXML.maximumDepth
                        ? "elements are nested more than \(PolicyXML.maximumDepth) deep"
                        : "the file has more than \(PolicyXML.maximumElements) elements",
                    line: parser.lineNumber)
                return parser.abortParsing()
            }
            let node = PolicyNode(name: name, attributes: attributes, line: parser.lineNumber)
            if let parent = stack.last { parent.children.append(node) } else { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            _ = stack.popLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { stack.last?.text += string }
        func parser(_ parser: XMLParser, foundCDATA data: Data) { stack.last?.text += String(decoding: data, as: UTF8.self) }
    }
}
