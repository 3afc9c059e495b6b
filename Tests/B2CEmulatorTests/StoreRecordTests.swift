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

    /// A file store reads a refresh grant's token and person on connections of its own (`DirectReads`), a store in
    /// memory through GRDB: the same writes read back the same on both, a rotation, a revocation and a deleted person too.
    @Test func aRefreshTokenAndItsPersonReadTheSameOnAFileAsInMemory() throws {
        func exercise(_ store: EmulatorStore) throws -> [(EmulatorStore.RefreshRecord, EmulatorStore.UserRecord?)?] {
            let kept = try store.createUser(
                oid: "0b0b0000-0000-4000-8000-00000000000b", email: "r@contoso.com", password: "pw", displayName: "Rö \"R\"",
                givenName: "R", surname: "S", now: 7)
            try store.setAttributes(oid: kept.oid, ["city": "Zürich", "extension_Tier": 3])
            let gone = try store.createUser(
                oid: "0c0c0000-0000-4000-8000-00000000000c", email: "g@contoso.com", password: "pw", displayName: "G",
                givenName: "G", surname: "H", now: 8)
            func token(_ value: String, oid: String, rotating: String? = nil, spa: Bool = false) throws {
                let record = EmulatorStore.RefreshRecord(
                    grantId: "grant-" + oid.prefix(4), clientId: "client", policy: "b2c_1_susi", oid: oid, scopes: "openid offline_access",
                    authTime: 10, issuedAt: 11, grantIssuedAt: 9, rotatedAt: nil, revoked: false, confidential: !spa, spa: spa)
                try store.saveRefreshToken(.init(token: value, record: record, rotating: rotating, now: 12))
            }
            try token("first", oid: kept.oid)
            try token("second", oid: kept.oid, rotating: "first", spa: true)
            try token("other", oid: gone.oid)
            var reads = try ["first", "second", "other", "never issued"].map(store.refreshTokenAndUser)
            #expect(try store.deleteUser(oid: gone.oid))
            _ = try store.revokeGrants(oid: kept.oid, now: 13)
            reads += try ["first", "second", "other"].map(store.refreshTokenAndUser)
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
            #expect(onFile[0]?.0.rotatedAt == 12 && onFile[1]?.0.spa == true && onFile[1]?.1?.attributes["city"] == "Zürich")
            #expect(onFile[3] == nil && onFile[6]?.1 == nil && onFile[5]?.0.revoked == true)
        }
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
        for i in 0..<8 {
            let record = EmulatorStore.RefreshRecord(
                grantId: "g\(i)", clientId: "client", policy: "b2c_1_susi", oid: oid, scopes: "openid", authTime: i, issuedAt: i,
                grantIssuedAt: i, rotatedAt: nil, revoked: false)
            try store.saveRefreshToken(.init(token: "token-\(i)", record: record, rotating: nil, now: i))
        }
        let wrong = NIOLockedValueBox(0)
        DispatchQueue.concurrentPerform(iterations: 400) { n in
            let i = n % 8
            let read = try? store.refreshTokenAndUser("token-\(i)")
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
            let entries = try store.requests.entries()
            #expect(entries.map(\.outcome) == ["ok", "AADB2C90080"] && entries.first?.json["oid"] == .null)
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
