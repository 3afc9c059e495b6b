import B2CProtocol
import Foundation

/// A request as the emulator's handlers see it, independent of the HTTP server underneath.
struct HTTPInput: Sendable {
    var method: String
    var path: String
    var segments: [String]
    var query: [String: String]
    var headers: [String: String]       // lower-cased names; repeated headers joined with ", " (cookies with "; ")
    var body: Data
    var host: String                    // host[:port] as the client addressed us
    var scheme: String                  // http or https
    var peerIsLoopback: Bool

    var cookies: [String: String] {
        var out: [String: String] = [:]
        for part in (headers["cookie"] ?? "").split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            out[kv[0].trimmingCharacters(in: .whitespaces)] = String(kv[1]).trimmingCharacters(in: .whitespaces)
        }
        return out
    }

    var origin: String { "\(scheme)://\(host)" }

    /// Form parameters of a POST body (`application/x-www-form-urlencoded`).
    func form() throws -> [String: String] {
        let type = (headers["content-type"] ?? "").lowercased()
        guard type.hasPrefix("application/x-www-form-urlencoded") else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083",
                               message: "The request body must be application/x-www-form-urlencoded (got '\(type.isEmpty ? "no content type" : type)').")
        }
        guard let text = String(data: body, encoding: .utf8) else {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The request body is not UTF-8.")
        }
        do { return try FormEncoding.parse(text) } catch {
            throw OAuthFailure(error: "invalid_request", code: "AADB2C90083", message: "The request body is malformed: \(error).")
        }
    }
}

/// A response before it is handed to the HTTP server.
struct HTTPOutput: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: Data = Data()
    var dropConnection = false

    static func json(_ value: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> HTTPOutput {
        HTTPOutput(status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers, body: value.data)
    }

    static func html(_ html: String, status: Int = 200, headers: [(String, String)] = []) -> HTTPOutput {
        HTTPOutput(status: status,
                   headers: [("Content-Type", "text/html; charset=utf-8"), ("X-Frame-Options", "DENY"), ("Cache-Control", "no-store")] + headers,
                   body: Data(html.utf8))
    }

    static func redirect(_ location: String, headers: [(String, String)] = []) -> HTTPOutput {
        HTTPOutput(status: 302, headers: [("Location", location), ("Cache-Control", "no-store")] + headers)
    }

    static func text(_ text: String, status: Int) -> HTTPOutput {
        HTTPOutput(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
    }
}

/// An OAuth / B2C error: `error` plus an AADB2C code and message, rendered in B2C's format.
struct OAuthFailure: Error, Sendable {
    var error: String
    var code: String
    var message: String
    var status: Int = 400

    func description(at date: Date) -> String {
        B2CErrorDescription.format(code: code, message: message, at: date)
    }

    func response(at date: Date) -> HTTPOutput {
        .json(["error": .string(error), "error_description": .string(description(at: date))], status: status,
              headers: [("Cache-Control", "no-store"), ("Pragma", "no-cache")])
    }
}

/// An AAD-style error (native authentication endpoints).
struct AADFailure: Error, Sendable {
    var error: String
    var description: String
    var codes: [Int]
    var suberror: String? = nil
    var status: Int = 400

    func response(at date: Date) -> HTTPOutput {
        var body: [String: JSONValue] = [
            "error": .string(error), "error_description": .string(description),
            "error_codes": .array(codes.map { JSONValue($0) }),
            "timestamp": .string(B2CErrorDescription.timestampString(date)),
            "trace_id": .string(UUID().uuidString.lowercased()), "correlation_id": .string(UUID().uuidString.lowercased()),
        ]
        if let suberror { body["suberror"] = .string(suberror) }
        return .json(.object(body), status: status, headers: [("Cache-Control", "no-store")])
    }
}

enum HTML {
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
