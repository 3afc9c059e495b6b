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

extension EmulatorStore.UserRecord {
    func with(accountEnabled: Bool, passwordChangeDue: Bool) -> Self {
        var copy = self
        (copy.accountEnabled, copy.passwordChangeDue) = (accountEnabled, passwordChangeDue)
        return copy
    }
}
