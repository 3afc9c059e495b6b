import B2CProtocol
import Foundation
import GRDB
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
