@testable import B2CCLI
@testable import B2CKit
import B2CFastPath
import Foundation
import Testing

/// What reaches a terminal (docs/security.md, "what a terminal can and cannot do"): text from outside without the
/// control characters a terminal obeys, JSON with them escaped, and tokens byte for byte or not at all.
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("\u{1B}]52;c;aGk=\u{07}", "\u{FFFD}]52;c;aGk=\u{FFFD}"),  // OSC 52: writes the clipboard
        ("\u{1B}[2J", "\u{FFFD}[2J"),  // CSI 2J: clears the screen
        ("\u{9B}31m", "\u{FFFD}31m"),  // C1 CSI
        ("a\u{7F}b", "a\u{FFFD}b"),  // DEL
        ("\u{85}\u{9F}\u{80}", "\u{FFFD}\u{FFFD}\u{FFFD}"),  // C1's ends
        ("\u{0}\u{8}\r\u{B}\u{C}", "\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}"),  // NUL, backspace, carriage return, VT, FF
        ("\r\n", "\u{FFFD}\n"),  // one Character, two scalars
        ("\u{1B}\u{301}", "\u{FFFD}\u{301}"),  // ESC hidden in a grapheme cluster with a combining mark
        ("line one\n\tline two", "line one\n\tline two"),  // line feed and tab stay
        // From U+00A0 on it is text: names, accents, CJK, combining marks, emoji.
        ("Zoë 山田 e\u{301} \u{A0}\u{A9}\u{BF} 👩‍💻", "Zoë 山田 e\u{301} \u{A0}\u{A9}\u{BF} 👩‍💻"),
    ])
    func controlCharactersAreShownAsReplacementCharacters(text: String, shown: String) {
        #expect(Terminal.shown(text) == shown)
        #expect(Terminal.containsControls(text) == (text != shown))
    }

    @Test func tablesStayAlignedAroundAReplacement() {
        let text = table([["NAME", "EMAIL"], [Terminal.shown("Mal\u{1B}[2Jlory"), "m@x"], ["Bob", "b@x"]])
        #expect(text == "NAME         EMAIL\nMal\u{FFFD}[2Jlory  m@x\nBob          b@x")
    }

    /// JSON allows DEL and C1 raw; b2c escapes them, so JSON on a terminal is as safe as a table, and the value is whole.
    @Test func jsonEscapesDELAndC1AndKeepsTheValue() throws {
        let value = "Mal\u{1B}]52;c;x\u{07}\u{7F}\u{9B}2J Zoë \u{A0}"
        let text = JSONValue.object(["name": .string(value)]).serialized()
        #expect(text == #"{"name":"Mal\u001b]52;c;x\u0007\u007f\u009b2J Zoë "# + "\u{A0}\"}")
        #expect(try JSONValue.parse(Data(text.utf8))["name"] == .string(value))
    }

    @Test(arguments: TokenFormat.allCases) func aTokenIsPrintedByteForByte(format: TokenFormat) throws {
        let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl-_"
        let text = try Output.tokenText(token, expiresOn: 1, format: format, json: ["policy": .string("B2C_1_susi")])
        #expect(text == TokenText.render(token, expiresOn: 1, format: format, extra: ["policy": .string("B2C_1_susi")]))
    }

    /// A tenant's "token" made to drive the terminal (RFC 6749 allows only printable ASCII in one): not printed, exit 5.
    @Test(arguments: ["a.b.c\u{1B}]52;c;aGk=\u{07}", "a.b\u{9B}2J", "a\u{7F}", "a\nb", "a.b.cé"])
    func aTokenWithOtherCharactersIsNotPrinted(token: String) {
        #expect {
            try Output.tokenText(token, expiresOn: 1, format: .raw, json: [:])
        } throws: { ($0 as? CLIError)?.exitCode == ExitStatus.network }
    }
}
