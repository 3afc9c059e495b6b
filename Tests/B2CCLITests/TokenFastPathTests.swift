@testable import B2CCLI
import Foundation
import Testing

/// `b2c token`'s fast path must parse exactly what ArgumentParser parses, or step aside.
@Suite struct TokenFastPathTests {
    /// ArgumentParser's reading of the same arguments (nil when it refuses them).
    static func viaArgumentParser(_ args: [String]) -> TokenArguments? {
        (try? TokenCommand.parse(Array(args.dropFirst())))?.arguments
    }

    @Test func theFastPathTakesThePlainFormsAndAgreesWithArgumentParser() {
        let plain: [[String]] = [
            ["token"], ["token", "--format", "json"], ["token", "--format=bearer", "--policy", "B2C_1_susi"],
            ["token", "--account", "bob@contoso.com", "--scope", "https://x/a.read", "--scope", "https://x/b.write", "--force-refresh"],
            ["token", "--api", "hello", "--min-valid", "4000", "--http-timeout", "1", "--config", "/tmp/p.json", "-v"],
            ["token", "--verbose", "--min-valid=0", "--account=0a11ce00"], ["token", "--min-valid", "-5"], ["token", "--output", "json"],
            ["token", "-o", "header", "--api", "hello"],
        ]
        for args in plain {
            let fast = TokenArguments.fastParse(args)
            #expect(fast != nil, "\(args) is a plain form")
            #expect(fast == Self.viaArgumentParser(args), "\(args)")
        }
    }

    @Test func anythingElseGoesToArgumentParser() {
        let others: [[String]] = [
            ["token", "--help"], ["token", "-h"], ["token", "--policy"], ["token", "--policy", "--account", "x"],
            ["token", "--format", "yaml"],
            ["token", "--min-valid", "soon"], ["token", "--format", "json", "--output", "raw"], ["token", "-o", "json", "-o", "raw"],
            ["token", "--http-timeout", "0"], ["token", "--http-timeout", "601"],
            ["token", "--policy", "a", "--policy", "b"], ["token", "--unknown"], ["token", "extra"], ["token", "--force-refresh=yes"],
            ["token", "--", "x"], ["accounts"], [], ["token", "-vh"],
        ]
        for args in others { #expect(TokenArguments.fastParse(args) == nil, "\(args)") }
    }

    @Test func randomArgumentListsNeverDisagree() {
        let names = [
            "--policy", "--account", "--api", "--scope", "--min-valid", "--format", "--output", "-o", "--config", "--http-timeout",
            "--force-refresh", "--verbose", "-v", "--help", "--bogus", "--",
        ]
        let values = ["B2C_1_susi", "bob@contoso.com", "300", "0", "-1", "600", "601", "json", "raw", "yaml", "", "a=b", "-x", "--policy"]
        var rng = SystemRandomNumberGenerator()
        var fastCount = 0
        for _ in 0..<3_000 {
            var args = ["token"]
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                let name = names.randomElement(using: &rng)!
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: args.append(name)
                case 1: args += [name, values.randomElement(using: &rng)!]
                default: args.append(name + "=" + values.randomElement(using: &rng)!)
                }
            }
            guard let fast = TokenArguments.fastParse(args) else { continue }
            fastCount += 1
            #expect(fast == Self.viaArgumentParser(args), "\(args)")
        }
        #expect(fastCount > 100, "the corpus reaches the fast path (\(fastCount) of 3,000)")
    }
}
