import B2CFastPath
import B2CKit
import Foundation

extension Output {
    // MARK: tokens and the store's settings

    /// A token in the asked format; `json` adds what identifies it (`json`'s other keys).
    static func writeToken(_ secret: String, expiresOn: Int, format: TokenFormat, json extra: [String: TokenText.Field]) throws {
        FileHandle.standardOutput.write(Data(try tokenText(secret, expiresOn: expiresOn, format: format, json: extra).utf8))
    }

    /// A token's printed form, byte for byte as the tenant issued it (scripts and the fast path depend on that), or a
    /// refusal: a token is printable ASCII (RFC 6749, appendix A), and one with anything else was made to reach a terminal.
    static func tokenText(_ secret: String, expiresOn: Int, format: TokenFormat, json extra: [String: TokenText.Field]) throws -> String {
        guard secret.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw CLIError(
                "the token the tenant issued holds characters no OAuth token has (RFC 6749 allows printable ASCII only); it was "
                    + "not printed. Sign in again (b2c signin); if the tenant issues such a token again, tell its administrator",
                exitCode: ExitStatus.network)
        }
        return TokenText.render(secret, expiresOn: expiresOn, format: format, extra: extra)
    }

    /// An API's answer that is not JSON: its bytes as they came into a file or a pipe (they are the data); on a terminal,
    /// text shown as `Terminal` shows it, ending with a line feed.
    static func writeBody(_ body: Data) {
        guard !body.isEmpty else { return }
        guard isatty(STDOUT_FILENO) == 1 else { return FileHandle.standardOutput.write(body) }
        let text = String(decoding: body, as: UTF8.self)
        Terminal.out(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// A token decoded (not verified): its header and claims, times as dates, with a note that it was not checked.
    static func writeDecodedJWT(_ token: String, format: OutputFormat, now: Int) throws {
        let jwt: JWT
        do { jwt = try JWT.decode(token) } catch { throw CLIError("\(error)", exitCode: ExitStatus.error) }
        switch format {
        case .json:
            writeOut(
                JSONValue.object(["verified": false, "header": .object(jwt.header), "claims": .object(jwt.claims)]).serialized(pretty: true)
            )
        case .table:
            // The note is a line of its own above the table: as a row it would set the width of the key column.
            var rows: [[String]] = []
            for (k, v) in jwt.header.sorted(by: { $0.key < $1.key }) { rows.append(["header \(k)", v.stringValue ?? v.serialized()]) }
            for (k, v) in jwt.claims.sorted(by: { $0.key < $1.key }) {
                let time = Output.timeClaims.contains(k) ? v.lenientInt.map { Output.dateAndRelative($0, now: now) } : nil
                rows.append([k, time ?? v.stringValue ?? v.serialized()])
            }
            if let exp = jwt.int("exp") {
                rows.append(["", exp > now ? "expires \(Output.relative(exp - now))" : "expired \(Output.relative(now - exp, past: true))"])
            }
            writeOut("(unverified: decoded only; `b2c jwt verify` checks it)\n" + table(rows))
        }
    }

}
