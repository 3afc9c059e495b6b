import B2CProtocol
import Foundation
import GRDB
import NIOConcurrencyHelpers
import Testing

@testable import B2CEmulator

/// The store's cold tables through their GRDB records: what is written reads back as it was, on a file store (the
/// tenant's own kind), and the columns a record leaves out keep their defaults.
struct StoreRecordTests {
    static func withStore(_ body: (EmulatorStore) throws -> Void) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try EmulatorStore.file(directory: dir)
        defer { store.close() }
        try body(store)
    }

    /// A file store reads a refresh grant's grant and person on connections of its own (`DirectReads`), a store in memory
    /// through GRDB: the same tokens read back the same on both, a revocation and a deleted person too.
    @Test func aRefreshTokenAndItsPersonReadTheSameOnAFileAsInMemory() throws {
        func exercise(_ store: EmulatorStore) throws -> [(EmulatorStore.RefreshRecord, EmulatorStore.UserRecord?)?] {
            let kept = try store.createUser(
                oid: "0b0b0000-0000-4000-8000-00000000000b", email: "r@contoso.com", password: "pw", displayName: "Rö \"R\"",
                givenName: "R", surname: "S", now: 7)
            try store.setAttributes(oid: kept.oid, ["city": "Zürich", "extension_Tier": 3])
            let gone = try store.createUser(
                oid: "0c0c0000-0000-4000-8000-00000000000c", email: "g@contoso.com", password: "pw", displayName: "G",
                givenName: "G", surname: "H", now: 8)
            func token(_ grant: String, oid: String, spa: Bool = false) throws -> String {
                let record = EmulatorStore.RefreshRecord(
                    grantId: grant, clientId: "client", policy: "b2c_1_susi", oid: oid, scopes: "openid offline_access",
                    authTime: 10, issuedAt: 11, grantIssuedAt: 9, confidential: !spa, spa: spa)
                try store.saveGrant(record)
                return store.refreshToken(record)
            }
            let tokens = [
                try token("g1", oid: kept.oid), try token("g2", oid: kept.oid.uppercased(), spa: true), try token("g3", oid: gone.oid),
            ]
            var reads = try (tokens + ["never issued"]).map(store.refreshTokenAndUser)
            #expect(try store.deleteUser(oid: gone.oid))
            #expect(try store.revokeGrants(oid: kept.oid, now: 13) == 2)
            reads += try tokens.map(store.refreshTokenAndUser)
            return reads
        }
        let memory = try exercise(EmulatorStore.inMemory())
        try Self.withStore { file in
            #expect(file.directReads != nil)
            let onFile = try exercise(file)
            #expect(onFile.count == memory.count)
            for (i, (a, b)) in zip(onFile, memory).enumerated() {
                #expect(a?.0 == b?.0 && a?.1 == b?.1, "read \(i)")
            }
            #expect(onFile[0]?.0.revoked == false && onFile[0]?.0.confidential == true && onFile[0]?.1?.oid == onFile[1]?.1?.oid)
            #expect(onFile[1]?.0.spa == true && onFile[1]?.1?.attributes["city"] == "Zürich" && onFile[1]?.0.authTime == 10)
            #expect(onFile[3] == nil && onFile[6]?.1 == nil && onFile[4]?.0.revoked == true && onFile[5]?.0.revoked == true)
        }
    }

    /// A refresh token opens only under the key of the state that sealed it, unaltered: a change to any of its parts, another
    /// state's token or a token of another form is not one (AADB2C90090 at the endpoint). A file state keeps its key.
    @Test func aSealedRefreshTokenOpensOnlyUnalteredAndUnderItsStatesKey() throws {
        let record = EmulatorStore.RefreshRecord(
            grantId: "g", clientId: "c", policy: "b2c_1_susi", oid: "o", scopes: "openid offline_access", authTime: 1, issuedAt: 2,
            grantIssuedAt: 1)
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let token: String
        do {
            let store = try EmulatorStore.file(directory: dir)
            defer { store.close() }
            token = store.refreshToken(record)
            #expect(store.refreshSeal.open(token) == record)
            #expect(store.refreshToken(record) != token, "a fresh nonce per token")
        }
        let reopened = try EmulatorStore.file(directory: dir)
        defer { reopened.close() }
        #expect(reopened.refreshSeal.open(token) == record)
        #expect(try EmulatorStore.inMemory().refreshSeal.open(token) == nil)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 5 && parts[1].isEmpty)
        for i in [0, 2, 3, 4] {
            var altered = parts
            let c = altered[i].removeLast()
            altered[i].append(c == "A" ? "B" : "A")
            #expect(reopened.refreshSeal.open(altered.joined(separator: ".")) == nil, "part \(i) altered")
        }
        for other in ["", "....", token + ".", String(token.dropLast()), parts[0] + "..." + parts[3] + "." + parts[4]] {
            #expect(reopened.refreshSeal.open(other) == nil)
        }
    }

    /// A replayed code revokes its grant even when the first redemption's tokens are not out yet (no row for the grant):
    /// the grant the redemption then records stays revoked.
    @Test func aCodeReplayedBeforeItsGrantIsRecordedLeavesTheGrantRevoked() throws {
        try Self.withStore { store in
            let oid = try store.createUser(email: "e@contoso.com", password: "pw", displayName: "E", givenName: "E", surname: "F", now: 1)
                .oid
            let code = EmulatorStore.CodeRecord(
                clientId: "client", redirectUri: "http://localhost", policy: "B2C_1_susi", scopes: "openid offline_access", nonce: nil,
                challenge: nil, challengeMethod: nil, oid: oid, authTime: 5, newUser: false, createdAt: 5, redeemedAt: nil,
                grantId: "g-replayed")
            try store.codes.save("the code", code)
            guard case .fresh = try store.codes.redeem("the code", now: 6) else { Issue.record("first redemption"); return }
            guard case .replayed = try store.codes.redeem("the code", now: 7) else { Issue.record("replay"); return }
            let record = EmulatorStore.RefreshRecord(
                grantId: "g-replayed", clientId: "client", policy: "b2c_1_susi", oid: oid, scopes: "openid offline_access", authTime: 5,
                issuedAt: 6, grantIssuedAt: 6)
            try store.saveGrant(record)
            #expect(try store.refreshTokenAndUser(store.refreshToken(record))?.0.revoked == true)
        }
    }

    /// The sealed record's bytes read back as written, strings of any script and times of either sign; a record cut short,
    /// with a byte more or of another version, is none.
    @Test func aRefreshRecordsBytesReadBackAndNothingElseDoes() {
        let record = EmulatorStore.RefreshRecord(
            grantId: "grant", clientId: "client", policy: "b2c_1a_signup_signin", oid: "ö😀", scopes: "", authTime: -1,
            issuedAt: 1_800_000_000, grantIssuedAt: Int(Int32.max) + 1, confidential: true, spa: true)
        let bytes = RefreshTokenSeal.Fields.encode(record)
        #expect(RefreshTokenSeal.Fields.decode(bytes) == record)
        // The layout itself, byte for byte (tokens sealed by an earlier build must open): version, five strings with
        // two-byte lengths, three eight-byte times, the flags.
        let text: (String) -> [UInt8] = { [UInt8($0.utf8.count >> 8), UInt8($0.utf8.count & 0xFF)] + Array($0.utf8) }
        let time: (Int64) -> [UInt8] = { t in stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: t >> $0) } }
        #expect(
            bytes
                == [1] + text("grant") + text("client") + text("b2c_1a_signup_signin") + text("ö😀") + text("") + time(-1)
                + time(1_800_000_000) + time(Int64(Int32.max) + 1) + [3])
        var plain = record
        (plain.confidential, plain.spa) = (false, false)
        #expect(RefreshTokenSeal.Fields.decode(RefreshTokenSeal.Fields.encode(plain)) == plain)
        for n in 0..<bytes.count { #expect(RefreshTokenSeal.Fields.decode(Array(bytes.prefix(n))) == nil, "\(n) bytes") }
        #expect(RefreshTokenSeal.Fields.decode(bytes + [0]) == nil)
        #expect(RefreshTokenSeal.Fields.decode([2] + bytes.dropFirst()) == nil)
    }

    /// A state written before sealed refresh tokens: migration v16 records its grants (revoked when any of their tokens
    /// was), the stored tokens are still redeemed from `refresh_tokens`, and a revocation now reaches them through the grant.
    @Test func theStoredRefreshTokensOfAnEarlierEmulatorStillRedeemAndRevoke() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let oid = "0d0d0000-0000-4000-8000-00000000000d"
        do {
            let old = try DatabaseQueue(path: dir.appendingPathComponent("emulator.sqlite").path)
            try EmulatorSchema.migrator.migrate(old, upTo: "v15-device-flows")
            try old.write { db in
                for (token, grant, revoked) in [("live", "g-live", 0), ("rotated", "g-live", 0), ("revoked", "g-revoked", 1)] {
                    try db.execute(
                        sql: """
                            INSERT INTO refresh_tokens(hash, grant_id, client_id, policy, oid, scopes, auth_time, issued_at,
                                                       grant_issued_at, revoked, confidential, spa)
                            VALUES (?, ?, 'client', 'b2c_1_susi', ?, 'openid offline_access', 5, 6, 4, ?, 0, 1)
                            """, arguments: [EmulatorStore.hash(token), grant, oid.uppercased(), revoked])
                }
            }
        }
        let store = try EmulatorStore.file(directory: dir)
        defer { store.close() }
        _ = try store.createUser(oid: oid, email: "d@contoso.com", password: "pw", displayName: "D", givenName: "D", surname: "E", now: 1)
        let live = try #require(try store.refreshTokenAndUser("live"))
        #expect(live.0.grantId == "g-live" && live.0.spa && !live.0.revoked && live.0.authTime == 5 && live.1?.oid == oid)
        #expect(try store.refreshTokenAndUser("rotated")?.0.revoked == false)
        #expect(try store.refreshTokenAndUser("revoked")?.0.revoked == true)
        #expect(try store.refreshTokenAndUser("never") == nil)
        #expect(try store.revokeGrants(oid: oid, now: 7) == 1)
        #expect(try store.refreshTokenAndUser("live")?.0.revoked == true && store.refreshTokenAndUser("rotated")?.0.revoked == true)
    }

    /// The direct reads' connections close with the store (a test suite opens hundreds of tenants in one process), and a
    /// read after the close fails as GRDB's do rather than reopening the file.
    /// The files this process has open under `dir` (other tests open theirs meanwhile: only this store's count).
    static func openFiles(under dir: URL) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(dir.path) }
    }

    /// Reads from many threads at once each get a connection of their own and the right row; the connections beyond
    /// those kept for later close as they come back, and the rest with the store.
    @Test func overlappingDirectReadsAgreeAndCloseWithTheStore() throws {
        let dir = temporaryDirectory().resolvingSymlinksInPath()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try EmulatorStore.file(directory: dir)
        let oid = try store.createUser(email: "c@contoso.com", password: "pw", displayName: "C", givenName: "C", surname: "D", now: 1).oid
        let tokens = try (0..<8).map { i in
            let record = EmulatorStore.RefreshRecord(
                grantId: "g\(i)", clientId: "client", policy: "b2c_1_susi", oid: oid, scopes: "openid", authTime: i, issuedAt: i,
                grantIssuedAt: i)
            try store.saveGrant(record)
            return store.refreshToken(record)
        }
        let wrong = NIOLockedValueBox(0)
        DispatchQueue.concurrentPerform(iterations: 400) { n in
            let i = n % 8
            let read = try? store.refreshTokenAndUser(tokens[i])
            if read?.0.grantId != "g\(i)" || read?.0.authTime != i || read?.1?.oid != oid { wrong.withLockedValue { $0 += 1 } }
        }
        #expect(wrong.withLockedValue { $0 } == 0)
        store.close()
        #expect(Self.openFiles(under: dir) == [])
    }

    @Test func theDirectReadsCloseWithTheStore() throws {
        for _ in 0..<5 {
            let dir = temporaryDirectory().resolvingSymlinksInPath()
            defer { try? FileManager.default.removeItem(at: dir) }
            let store = try EmulatorStore.file(directory: dir)
            #expect(try store.refreshTokenAndUser("none") == nil)
            #expect(!Self.openFiles(under: dir).isEmpty)
            store.close()
            #expect(Self.openFiles(under: dir) == [])
            #expect(throws: DatabaseError.self) { try store.refreshTokenAndUser("none") }
            #expect(Self.openFiles(under: dir) == [])
        }
    }

    @Test func aDeviceFlowIsFoundByEitherCodeUpdatedAndSweptAnHourAfterItEnds() throws {
        try Self.withStore { store in
            let flow = EmulatorStore.DeviceFlow(
                clientId: "c", scope: "openid", userCode: "ABCD-EFGH", createdAt: 1000, expiresAt: 1900, interval: 5, verifier: "v",
                redirectUri: "http://localhost")
            try store.saveDeviceFlow(deviceCode: "device-1", flow)
            let (hash, found) = try #require(try store.deviceFlow(userCode: "abcd-efgh"))
            #expect(found.clientId == "c" && found.status == .pending && hash == EmulatorStore.hash("device-1"))
            var approved = found
            (approved.status, approved.code) = (.approved, "code-1")
            try store.updateDeviceFlow(hash: hash, approved)
            let again = try #require(try store.deviceFlow(deviceCode: "device-1")).flow
            #expect(again.status == .approved && again.code == "code-1" && again.expiresAt == 1900)

            var later = flow
            (later.userCode, later.createdAt, later.expiresAt) = ("WXYZ-WXYZ", 1900 + 3601, 1900 + 4500)
            try store.saveDeviceFlow(deviceCode: "device-2", later)
            #expect(try store.deviceFlow(deviceCode: "device-1") == nil, "a flow an hour past its end is swept")
            #expect(try store.deviceFlow(deviceCode: "device-2")?.flow.userCode == "WXYZ-WXYZ")
        }
    }

    @Test func aUsersMFAStateIsSetTakenOnceAndReset() throws {
        try Self.withStore { store in
            let oid = try store.createUser(
                email: "m@contoso.com", password: "pw", displayName: "M", givenName: "M", surname: "F", now: 1
            ).oid
            #expect(
                try store.mfaState(oid: oid)
                    == MFAState(phone: nil, phoneEnrolled: false, totpSecret: nil, totpEnrolled: false, risky: false))
            try store.setPhone(oid: oid, "+14255550123", enrolled: true)
            try store.setTOTP(oid: oid, secret: "JBSWY3DPEHPK3PXP", enrolled: true)
            try store.setMFAEmail(oid: oid, "m@contoso.com")
            try store.setMFARequired(oid: oid, true)
            try store.setRisky(oid: oid, true)
            let set = MFAState(
                phone: "+14255550123", phoneEnrolled: true, totpSecret: "JBSWY3DPEHPK3PXP", totpEnrolled: true, risky: true,
                mfaEmail: "m@contoso.com", mfaRequired: true)
            #expect(try store.mfaState(oid: oid) == set)
            #expect(
                try [store.takeTOTPStep(oid: oid, 7), store.takeTOTPStep(oid: oid, 7), store.takeTOTPStep(oid: oid, 6)] == [
                    true, false, false,
                ])
            #expect(try store.takeTOTPStep(oid: oid, 8))
            try store.resetMFA(oid: oid)
            var reset = set
            (reset.phoneEnrolled, reset.totpSecret, reset.totpEnrolled, reset.mfaEmail) = (false, nil, false, nil)
            #expect(try store.mfaState(oid: oid) == reset)
            #expect(
                try store.mfaState(oid: "no-such-user")
                    == MFAState(phone: nil, phoneEnrolled: false, totpSecret: nil, totpEnrolled: false, risky: false))
        }
    }

    @Test func aNewUserKeepsWhatItWasGivenAndTheDefaultsOfTheRest() throws {
        try Self.withStore { store in
            let plain = try store.createUser(
                email: "p@contoso.com", password: "pw", displayName: "P", givenName: "P", surname: "Q", now: 5)
            #expect(try store.directoryProperties(oid: plain.oid) == EmulatorStore.DirectoryProperties())
            #expect(try store.user(oid: plain.oid) == plain)
            #expect(try store.checkPassword(email: "P@contoso.com", password: "pw") == plain)

            let properties = EmulatorStore.DirectoryProperties(
                signInType: "userName", accountEnabled: false, passwordPolicies: "DisablePasswordExpiration", forceChangePassword: true)
            let made = try store.createDirectoryUser(
                oid: "0d1e0000-0000-4000-8000-000000000001", signInName: "dir-user", password: "pw2", displayName: "D", givenName: "D",
                surname: "U", attributes: ["city": "Oslo"], properties: properties,
                federated: (issuer: "https://idp.example", subject: "s1"),
                now: 6)
            #expect(try store.directoryProperties(oid: made.oid) == properties)
            let read = try #require(try store.user(oid: made.oid))
            #expect(read.attributes == ["city": "Oslo"] && read.idp == "https://idp.example" && read.tokensValidFrom == 0)
            #expect(read == made.with(accountEnabled: false, passwordChangeDue: true))
            #expect(try store.federatedIdentities(oid: made.oid).map(\.subject) == ["s1"])
            #expect(try store.checkPassword(email: "dir-user", password: "pw2")?.oid == made.oid)
        }
    }

    @Test func settingsAndTheRequestLogReadBackAsWritten() throws {
        try Self.withStore { store in
            #expect(try store.setting("k") == nil)
            try store.setSetting("k", "one")
            try store.setSetting("k", "two")
            #expect(try store.setting("k") == "two")
            try store.setNextIdPAnswer(.google, IdPAnswer(subject: "s", email: "g@example.com"))
            #expect(try store.nextIdPAnswer(.google)?.email == "g@example.com")
            #expect(try store.takeNextIdPAnswer(.google)?.subject == "s" && store.takeNextIdPAnswer(.google) == nil)

            for outcome in ["ok", "AADB2C90080"] {
                store.requests.log(
                    .init(at: 7, endpoint: "token", grantType: "password", policy: "b2c_1_ropc", clientId: "c", oid: nil, outcome: outcome))
            }
            // Every column as written (the batch binds them itself): a person's grant, with a non-ASCII policy name.
            store.requests.log(
                .init(at: 8, endpoint: "idp", grantType: "google", policy: "b2c_1_été", clientId: "c2", oid: "o-1", outcome: "ok"))
            let entries = try store.requests.entries()
            #expect(entries.map(\.outcome) == ["ok", "AADB2C90080", "ok"] && entries.first?.json["oid"] == .null)
            #expect(
                entries.last.map { [String($0.at), $0.endpoint, $0.grantType, $0.policy, $0.clientId, $0.oid ?? "nil", $0.outcome] }
                    == ["8", "idp", "google", "b2c_1_été", "c2", "o-1", "ok"])
            try store.requests.clear()
            #expect(try store.requests.entries().isEmpty)
        }
    }
}

/// The token log writes its entries in batches; a reader, a stop and the delay alone each see every entry written.
struct RequestLogBatchTests {
    static func entry(_ n: Int) -> RequestLog.Entry {
        .init(at: n, endpoint: "token", grantType: "client_credentials", policy: "b2c_1_susi", clientId: "c", oid: nil, outcome: "ok")
    }

    @Test func entriesFromManyThreadsAreAllReadBackAndOneThreadsInItsOrder() throws {
        try StoreRecordTests.withStore { store in
            // More than one batch's limit from one thread: the order of the calls is the order of the ids.
            for n in 0..<(RequestLog.batchLimit + 88) { store.requests.log(Self.entry(n)) }
            #expect(try store.requests.entries().map(\.at) == Array(0..<(RequestLog.batchLimit + 88)))
            try store.requests.clear()
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for n in 0..<250 { store.requests.log(Self.entry(thread * 1000 + n)) }
            }
            let read = try store.requests.entries().map(\.at)
            #expect(read.count == 2000 && Set(read).count == 2000)
            for thread in 0..<8 {
                let own = read.filter { $0 / 1000 == thread }
                #expect(own == Array((thread * 1000)..<(thread * 1000 + 250)))
            }
        }
    }

    @Test func anEntryIsWrittenWithoutAReaderAskingAndSurvivesTheStoresClose() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try EmulatorStore.file(directory: dir)
        store.requests.log(Self.entry(1))
        // Another connection, which cannot write the waiting entries: it sees the row once the delay has passed.
        let other = try DatabaseQueue(path: dir.appendingPathComponent("emulator.sqlite").path)
        var seen = 0
        for _ in 0..<200 where seen == 0 {
            seen = try other.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM token_log") ?? 0 }
            if seen == 0 { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(seen == 1)
        // Entries still waiting when the store closes are written by the close.
        for n in 2...6 { store.requests.log(Self.entry(n)) }
        store.close()
        let reopened = try EmulatorStore.file(directory: dir)
        defer { reopened.close() }
        #expect(try reopened.requests.entries().map(\.at) == Array(1...6))
        try other.close()
    }
}

extension EmulatorStore.UserRecord {
    func with(accountEnabled: Bool, passwordChangeDue: Bool) -> Self {
        var copy = self
        (copy.accountEnabled, copy.passwordChangeDue) = (accountEnabled, passwordChangeDue)
        return copy
    }
}
