import Foundation

/// Exclusive XML Canonicalization 1.0 without comments (W3C `xml-exc-c14n#`), the form XML signatures in SAML digest and
/// sign: the bytes of one element's subtree, with a namespace declared where an element or attribute uses it (and was not
/// already declared the same way by an ancestor in the output), attributes sorted, empty elements written as a start and
/// an end tag, and text escaped one way.
enum ExclusiveC14N {
    /// The canonical bytes of `element`, leaving out `excluding` (the enveloped signature) and treating the prefixes of
    /// an `InclusiveNamespaces PrefixList` ("#default" for the default namespace) as inclusive canonicalization would.
    static func canonicalize(_ element: XMLElement, excluding: XMLElement? = nil, inclusivePrefixes: Set<String> = []) -> Data {
        var out = ""
        render(element, rendered: ["": ""], excluding: excluding, inclusive: inclusivePrefixes, into: &out)
        return Data(out.utf8)
    }

    private static func render(
        _ e: XMLElement, rendered: [String: String], excluding: XMLElement?, inclusive: Set<String>, into out: inout String
    ) {
        var rendered = rendered
        var used = Set([e.prefix ?? ""])
        for a in e.attributes { if let p = a.prefix, p != "xml" { used.insert(p) } }
        for p in inclusive where e.namespace(for: p) != nil { used.insert(p) }
        var declarations: [(String, String)] = []
        for p in used where p != "xml" {
            let uri = e.namespace(for: p) ?? ""
            if rendered[p] != uri {
                declarations.append((p, uri))
                rendered[p] = uri
            }
        }
        out += "<" + e.qualifiedName
        for (p, uri) in declarations.sorted(by: { $0.0 < $1.0 }) {
            out += (p.isEmpty ? " xmlns=\"" : " xmlns:\(p)=\"") + escapeAttribute(uri) + "\""
        }
        let attributes = e.attributes.sorted { ($0.namespaceURI, $0.localName) < ($1.namespaceURI, $1.localName) }
        for a in attributes { out += " " + a.qualifiedName + "=\"" + escapeAttribute(a.value) + "\"" }
        out += ">"
        for child in e.children {
            switch child {
            case .element(let c) where c === excluding: continue
            case .element(let c): render(c, rendered: rendered, excluding: excluding, inclusive: inclusive, into: &out)
            case .text(let t): out += escapeText(t)
            case .instruction(let body):
                // The target, then (when there is any) one space and the data without its leading whitespace.
                let target = body.prefix { !$0.isWhitespace }
                let data = body.dropFirst(target.count).drop { $0.isWhitespace }
                out += "<?" + target + (data.isEmpty ? "" : " " + data) + "?>"
            }
        }
        out += "</" + e.qualifiedName + ">"
    }

    /// Text: `&`, `<`, `>` and carriage returns as references (C14N §2.3).
    static func escapeText(_ s: String) -> String { escape(s, ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#xD;"]) }

    /// Attribute values: `&`, `<`, `"` and the whitespace characters a parser would otherwise normalize.
    static func escapeAttribute(_ s: String) -> String {
        escape(s, ["&": "&amp;", "<": "&lt;", "\"": "&quot;", "\t": "&#x9;", "\n": "&#xA;", "\r": "&#xD;"])
    }

    private static func escape(_ s: String, _ references: [Unicode.Scalar: String]) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            if let r = references[c] { out += r } else { out.unicodeScalars.append(c) }
        }
        return out
    }
}
