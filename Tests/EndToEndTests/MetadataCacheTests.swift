import B2CEmulator
import B2CKit
import Foundation
import Testing

/// The discovery documents and key sets cached in the store: their age counts from the fetch (issue 22, item 14).
@Suite struct MetadataCacheTests {
    /// `url|fetched_at` of every cached document.
    static func cached(_ w: World) throws -> [String] {
        let r = try runBlocking(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            ["-readonly", w.home.appendingPathComponent("store.sqlite").path, "SELECT url, fetched_at FROM metadata ORDER BY url"],
            environment: [:])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    static func fetchTimes(_ rows: [String]) -> [Int] { rows.compactMap { $0.split(separator: "|").last.flatMap { Int($0) } } }

    @Test func aCacheHitNeverRewritesTheDocumentSoItIsFetchedAgainADayAfterItsFetch() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice).status == 0)
            let token = try await w.b2c(["token"]).stdout
            let fetched = try Self.cached(w)
            #expect(fetched.count == 2, "discovery and the key set: \(fetched)")
            // 23 hours later, every read is a cache hit: nothing is written, so the age still counts from the first fetch.
            for _ in 0..<2 {
                _ = try await w.b2c(["jwt", "verify"], extra: ["B2C_CLOCK_OFFSET": String(23 * 3600)], stdin: token)
                #expect(try Self.cached(w) == fetched, "a read rewrote the cache")
            }
            // 25 hours after the fetch, both are fetched again (and stored with the new time).
            _ = try await w.b2c(["jwt", "verify"], extra: ["B2C_CLOCK_OFFSET": String(25 * 3600)], stdin: token)
            let again = Self.fetchTimes(try Self.cached(w))
            let first = Self.fetchTimes(fetched)
            #expect(again.count == 2 && zip(again, first).allSatisfy { $0 - $1 >= 25 * 3600 - 60 }, "\(again) after \(first)")
        }
    }
}
