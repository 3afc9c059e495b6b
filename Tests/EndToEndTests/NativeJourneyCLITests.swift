@testable import B2CEmulator
import B2CKit
import Foundation
import Testing

/// `b2c signup`, `b2c reset-password --native` and native sign-in's second factor, through the built binary against an
/// External ID tenant: at a terminal (prompts, hidden passwords, choices) and from stdin (scripts), with every refusal in
/// words and its exit code.
@Suite struct NativeJourneyCLITests {
    static let gil = EmulatorSeed.User(
        oid: "0611a000-5eed-4611-8000-000000000611", email: "gil@contoso.com", password: "Gil-dev-2026!", displayName: "Gil",
        givenName: "Gil", surname: "", mfaEnrolled: false)

    /// External ID, a user flow that requires a display name and a loyalty number at sign-up and (`mfa`) a second factor.
    static func seed(mfa: EmulatorSeed.MFA? = nil) -> EmulatorSeed {
        var seed = EmulatorSeed.defaultExternalID
        let i = seed.policies.firstIndex { $0.id == "B2C_1_susi" }!
        seed.policies[i].attributes = [
            .init(name: "displayName", required: true, label: "Display Name"),
            .init(name: "extension_loyaltyNumber", kind: .int, required: true, label: "Loyalty number"),
        ]
        seed.policies[i].mfa = mfa
        seed.users.append(gil)
        return seed
    }

    /// Types a new password at the `time`-th prompt for it, then `again` at the confirmation.
    func typeNewPassword(_ p: LiveProcess, for email: String, _ password: String, again: String? = nil, time: Int = 1) async throws {
        try await p.waitFor("New password for \(email): ", times: time)
        p.write(password)
        try await p.waitFor("Type it again: ", times: time)
        p.write(again ?? password)
    }

    func code(_ w: World, _ to: String) async throws -> String {
        let messages = try await w.admin("GET", "/outbox?to=\(to.replacingOccurrences(of: "+", with: "%2B"))")["messages"]?.arrayValue ?? []
        return try #require(messages.first?["code"]?.stringValue, "no code was sent to \(to)")
    }

    @Test func signUpAtTheTerminal() async throws {
        try await World.with(seed: Self.seed()) { w in
            let p = try LiveProcess(
                b2cBinary, ["signup", "--username", "erin@contoso.com"], environment: w.environment(as: nil), terminal: true)
            try await p.waitFor("Enter the 8-digit code sent to e***n@co*****.com (or 'resend'): ")
            p.write(try await code(w, "erin@contoso.com"))
            try await typeNewPassword(p, for: "erin@contoso.com", "alllowercase")
            try await p.waitFor("password_too_weak")
            try await typeNewPassword(p, for: "erin@contoso.com", "Erin-2026-pass!", time: 2)
            try await p.waitFor("Display Name (string): ")
            p.write("Erin")
            try await p.waitFor("Loyalty number (int): ")
            p.write("L-42")
            try await p.waitFor("does not match the pattern")
            p.write("42")
            let r = await p.finish()
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("Signed up and signed in as erin@contoso.com under ExternalID"), "\(r.stdout)")
            #expect(!p.echoed.contains("Erin-2026-pass!") && !r.stderr.contains("Erin-2026-pass!"), "the password was echoed")
            let who = try await w.b2c(["whoami", "-o", "json"])
            #expect(who.json["claims"]?["name"] == "Erin" && who.json["claims"]?["extension_loyaltyNumber"] == 42, "\(who.stdout)")
        }
    }

    @Test func signUpFromAScriptAndItsRefusals() async throws {
        try await World.with(seed: Self.seed()) { w in
            _ = try await w.admin("POST", "/mfa", ["fixedCode": "123456"])
            let args = ["signup", "--username", "fay@contoso.com", "--password-stdin", "--otp-stdin", "--attribute", "displayName=Fay"]
            // A required attribute not given and no terminal: the flag to give, nothing stored.
            let missing = try await w.b2c(args, stdin: "Fay-2026-pass!\n123456\n")
            #expect(missing.status == 64 && missing.stderr.contains("--attribute extension_"), "\(missing.stderr)")
            let weak = try await w.b2c(args + ["--attribute", "extension_loyaltyNumber=7"], stdin: "short\n123456\n")
            #expect(
                weak.status == 1 && weak.stderr.contains("password_too_short") && weak.stderr.contains("nothing was changed"),
                "\(weak.stderr)")
            let ok = try await w.b2c(args + ["--attribute", "extension_loyaltyNumber=7"], stdin: "Fay-2026-pass!\n123456\n")
            #expect(ok.status == 0 && ok.stdout.contains("Signed up and signed in as fay@contoso.com"), "\(ok.stderr)")
            let again = try await w.b2c(args + ["--attribute", "extension_loyaltyNumber=7"], stdin: "Fay-2026-pass!\n123456\n")
            #expect(again.status == 1 && again.stderr.contains("already an account fay@contoso.com"), "\(again.stderr)")
            #expect(again.stderr.contains("b2c signin --native --username fay@contoso.com"), "\(again.stderr)")
            let bad = try await w.b2c(["signup", "--username", "x@contoso.com", "--attribute", "=1"])
            #expect(bad.status == 64 && bad.stderr.contains("is not NAME=VALUE"), "\(bad.stderr)")
            // Without a password: the person signs in with codes.
            let otp = try await w.b2c(
                [
                    "signup", "--username", "gus@contoso.com", "--passwordless", "--otp-stdin", "--attribute", "displayName=Gus",
                    "--attribute", "extension_loyaltyNumber=8",
                ], stdin: "123456\n")
            #expect(otp.status == 0, "\(otp.stderr)")
            let people = try await w.b2c(["accounts", "-o", "json"]).json["people"]?.arrayValue ?? []
            #expect(Set(people.compactMap { $0["email"]?.stringValue }) == ["fay@contoso.com", "gus@contoso.com"], "\(people)")
        }
    }

    @Test func passwordResetFromStdinAndAtTheTerminal() async throws {
        try await World.with(seed: Self.seed()) { w in
            _ = try await w.admin("POST", "/mfa", ["fixedCode": "123456"])
            let reset = try await w.b2c(
                ["reset-password", "--native", "--username", alice.email, "--password-stdin", "--otp-stdin"],
                stdin: "Alice-new-2026!\n123456\n")
            #expect(reset.status == 0 && reset.stdout.contains("Password of alice@contoso.com reset; signed in"), "\(reset.stderr)")
            let old = try await w.b2c(["signin", "--native", "--username", alice.email, "--password-stdin"], stdin: alice.password + "\n")
            #expect(old.status == 4 && old.stderr.contains("wrong password"), "\(old.stderr)")
            let recent = try await w.b2c(
                ["reset-password", "--native", "--username", alice.email, "--password-stdin", "--otp-stdin"],
                stdin: "Alice-new-2026!\n123456\n")
            #expect(recent.status == 1 && recent.stderr.contains("password_recently_used"), "\(recent.stderr)")
            #expect(
                try await w.b2c(["reset-password", "--native", "--username", "ghost@contoso.com", "--otp-stdin"], stdin: "1\n").status == 4)
            #expect(try await w.b2c(["reset-password", "--username", alice.email]).status == 64)

            _ = try await w.admin("POST", "/mfa", [:])
            let p = try LiveProcess(
                b2cBinary, ["reset-password", "--native", "--username", bob.email], environment: w.environment(as: nil), terminal: true)
            try await p.waitFor("Enter the 8-digit code sent to b***b@co*****.com (or 'resend'): ")
            p.write(try await code(w, bob.email))
            try await typeNewPassword(p, for: "bob@contoso.com", "Bob-new-2026!", again: "Bob-other-2026!")
            try await p.waitFor("the two passwords differ")
            try await typeNewPassword(p, for: "bob@contoso.com", "Bob-new-2026!", time: 2)
            let r = await p.finish()
            #expect(r.status == 0 && r.stdout.contains("Password of bob@contoso.com reset"), "\(r.stderr)")
            #expect(!p.echoed.contains("Bob-new-2026!"), "the new password was echoed")
        }
    }

    @Test func secondFactorAndRegistration() async throws {
        try await World.with(seed: Self.seed(mfa: .init(methods: [.email, .phone], enforcement: .always))) { w in
            _ = try await w.admin("POST", "/mfa", ["fixedCode": "123456"])
            let args = ["signin", "--native", "--password-stdin", "--otp-stdin", "--username"]
            let mfa = try await w.b2c(args + [alice.email], stdin: alice.password + "\n123456\n")
            #expect(mfa.status == 0 && mfa.stdout.contains("Signed in as alice@contoso.com"), "\(mfa.stderr)")
            #expect(mfa.stderr.contains("a 6-digit code was sent to a***e@co*****.com"), "\(mfa.stderr)")
            // Gil has no method yet and the flow offers two: the choice is a flag in a script.
            let choose = try await w.b2c(args + [Self.gil.email], stdin: Self.gil.password + "\n123456\n")
            #expect(choose.status == 64 && choose.stderr.contains("--mfa-method (email or sms)"), "\(choose.stderr)")
            let bad = try await w.b2c(
                args + [Self.gil.email, "--mfa-method", "sms", "--mfa-target", "555"], stdin: Self.gil.password + "\n123456\n")
            #expect(bad.status == 1 && bad.stderr.contains("cannot register that address or number"), "\(bad.stderr)")
            let sms = try await w.b2c(
                args + [Self.gil.email, "--mfa-method", "sms", "--mfa-target", "+14255550142"], stdin: Self.gil.password + "\n123456\n")
            #expect(sms.status == 0 && sms.stderr.contains("sent to ********0142"), "\(sms.stderr)")
            let unknown = try await w.b2c(args + [Self.gil.email, "--mfa-method", "voice"], stdin: Self.gil.password + "\n123456\n")
            #expect(unknown.status == 64 && unknown.stderr.contains("not one the tenant offers"), "\(unknown.stderr)")

            // A new account under "always" registers its own address (no code: the tenant knows it) before its tokens.
            let signup = try await w.b2c(
                [
                    "signup", "--username", "ned@contoso.com", "--attribute", "displayName=Ned", "--attribute", "extension_loyaltyNumber=3",
                    "--password-stdin", "--otp-stdin", "--mfa-method", "email",
                ], stdin: "Ned-2026-pass!\n123456\n")
            #expect(signup.status == 0 && signup.stderr.contains("registered as your email method"), "\(signup.stderr)")

            // At a terminal: the password hidden, the method chosen by number, the code typed.
            _ = try await w.admin("POST", "/users/\(bob.email)/mfa", ["phone": "+14255550199"])
            _ = try await w.admin("POST", "/mfa", [:])
            let p = try LiveProcess(
                b2cBinary, ["signin", "--native", "--username", bob.email], environment: w.environment(as: nil), terminal: true)
            try await p.waitFor("Password for \(bob.email): ")
            p.write(bob.password)
            try await p.waitFor("Choose 1-2: ")
            p.write("2")
            try await p.waitFor("Enter the 8-digit code sent to ********0199 (or 'resend'): ")
            p.write(try await code(w, "+14255550199"))
            let r = await p.finish()
            #expect(r.status == 0 && r.stdout.contains("Signed in as bob@contoso.com"), "\(r.stderr)")
            #expect(r.stderr.contains("1. email (b***b@co*****.com)") && r.stderr.contains("2. sms (********0199)"), "\(r.stderr)")
        }
    }

    @Test func atTheTerminalResendRefusalsAndAnExpiredFlow() async throws {
        try await World.with(seed: Self.seed()) { w in
            // An address that has an account: said at once, with the sign-in to run.
            let taken = try LiveProcess(
                b2cBinary, ["signup", "--username", alice.email], environment: w.environment(as: nil), terminal: true)
            let takenRun = await taken.finish()
            #expect(takenRun.status == 1 && takenRun.stderr.contains("already an account alice@contoso.com"), "\(takenRun.stderr)")

            // Resend, then a password too short, then the tenant's clock runs past the flow's ten minutes.
            let p = try LiveProcess(
                b2cBinary, ["signup", "--username", "kim@contoso.com", "--attribute", "displayName=Kim"],
                environment: w.environment(as: nil), terminal: true)
            try await p.waitFor("Enter the 8-digit code sent to k***m@co*****.com (or 'resend'): ")
            let first = try await code(w, "kim@contoso.com")
            p.write("resend")
            try await p.waitFor("a new code was sent to k***m@co*****.com; the previous one no longer works")
            let second = try await code(w, "kim@contoso.com")
            #expect(second != first)
            p.write(second)
            try await typeNewPassword(p, for: "kim@contoso.com", "Sh0rt!")
            try await p.waitFor("password_too_short")
            try await p.waitFor("New password for kim@contoso.com: ", times: 2)
            try await w.advanceClock(601)
            try await typeNewPassword(p, for: "kim@contoso.com", "Kim-2026-pass!", time: 2)
            let r = await p.finish()
            #expect(r.status == 4 && r.stderr.contains("continuation token expired"), "\(r.stderr)")
            #expect(r.stderr.contains("b2c signin --native"), "the remedy: \(r.stderr)")
            #expect(try w.server.emulator.store.user(email: "kim@contoso.com") == nil, "an expired sign-up made no account")
        }
    }
}
