import Foundation
import Testing

/// docs/library.md's example is the program `b2c-library-example` (Examples/LibraryExample): the page shows it as it
/// is, and it runs against a local tenant — a browser sign-in the first time, a cache hit the second.
@Suite struct LibraryExampleTests {
    static let source = packageRoot.appendingPathComponent("Examples/LibraryExample/main.swift")

    @Test func thePageShowsTheProgramAsItIs() throws {
        let page = try String(contentsOf: packageRoot.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let program = try String(contentsOf: Self.source, encoding: .utf8)
        #expect(page.contains("```swift\n" + program + "```\n"), "docs/library.md must show Examples/LibraryExample/main.swift whole")
    }

    @Test func theProgramSignsInGetsATokenAndCallsTheAPI() async throws {
        try await World.with { w in
            let program = buildDir.appendingPathComponent("b2c-library-example")
            let first = try await run(program, [], environment: w.environment(as: alice))
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("Signed in as alice@contoso.com under B2C_1_susi"), "\(first.stdout)")
            #expect(first.stdout.contains("HTTP 200: ") && first.stdout.contains("Alice Example"), "\(first.stdout)")
            let tokenRequests = try await w.tokenLog().count
            let second = try await run(program, [], environment: w.environment(as: nil))
            #expect(second.status == 0, "\(second.stderr)")
            #expect(!second.stdout.contains("Signed in as") && second.stdout.contains("HTTP 200: "), "\(second.stdout)")
            #expect(try await w.tokenLog().count == tokenRequests, "the second run is a cache hit")
        }
    }
}
