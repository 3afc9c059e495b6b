import B2CProtocol
import Foundation
import GRDB
import Testing

@testable import B2CEmulator

/// The store's hot reads — a password check, and a refresh grant's grant with its person in one statement — read their
/// columns by position, which the throughput benchmark shows pays (bench/README.md, "Emulator throughput"); every other
/// read goes by column name. They name the columns they select, so a column added to a table cannot shift them: pinned
/// here by adding one to each table they read before a sign-in and a refresh.
struct StoreColumnTests {
    @Test func aColumnAddedToTheHotTablesChangesNoRead() async throws {
        try await TestTenant.with { t in
            try await t.emulator.store.db.write { db in
                try db.execute(sql: "ALTER TABLE users ADD COLUMN added_later TEXT DEFAULT 'shifted'")
                try db.execute(sql: "ALTER TABLE grants ADD COLUMN added_later INTEGER DEFAULT 7")
                try db.execute(sql: "ALTER TABLE refresh_tokens ADD COLUMN added_later INTEGER DEFAULT 7")
            }
            func ropc(_ password: String) async throws -> TestResponse {
                try await t.token(
                    "B2C_1_ROPC_Auth",
                    [
                        "grant_type": "password", "client_id": clientID, "username": alice.email, "password": password,
                        "scope": "openid offline_access \(clientID)",
                    ])
            }
            #expect(try await ropc("Not-her-2026-pw!").status == 400)
            let signedIn = try await ropc(alice.password)
            #expect(signedIn.status == 200, "\(signedIn.body)")
            let refreshToken = try #require(signedIn.json["refresh_token"]?.stringValue)
            let refreshed = try await t.token(
                "B2C_1_ROPC_Auth",
                ["grant_type": "refresh_token", "client_id": clientID, "refresh_token": refreshToken, "scope": "openid \(clientID)"])
            #expect(refreshed.status == 200, "\(refreshed.body)")
            for answer in [signedIn, refreshed] {
                let claims = try JWT.decode(try #require(answer.json["id_token"]?.stringValue)).claims
                #expect(claims["oid"]?.stringValue == alice.oid && claims["emails"]?.arrayValue?.first?.stringValue == alice.email)
                #expect(claims["tfp"]?.stringValue == "B2C_1_ROPC_Auth")
            }
        }
    }
}
