import B2CEmulator
import B2CKit
import Foundation
import Testing

/// Edit profile, password reset, ROPC and native auth through the built binary against the TLS emulator.
@Suite(.serialized) struct UserFlowTests {
    @Test func editProfileUpdatesThePersonUnderEveryPolicy() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            #expect(try await w.b2c(["signin"], as: bob, jar: "bob").status == 0)
            // Bob is current under B2C_1_susi; --account picks Alice. Her SSO session means no password is typed.
            let edit = try await w.b2c(
                ["edit-profile", "--account", alice.email], as: nil, jar: "alice",
                extra: ["B2C_AGENT_DISPLAY_NAME": "Alice Cooper", "B2C_AGENT_GIVEN_NAME": "Alicia"])
            #expect(edit.status == 0, "\(edit.stderr)")
            #expect(edit.stdout.contains("Profile of alice@contoso.com saved under B2C_1_edit_profile"))
            #expect(edit.stdout.contains("name: Alice Example → Alice Cooper") && edit.stdout.contains("given name: Alice → Alicia"))
            #expect(edit.stdout.contains("family name: Example (unchanged)"))

            let people = try #require(try await w.b2c(["accounts", "--output", "json"]).json["people"]?.arrayValue)
            #expect(people.count == 2, "edit-profile must not create a second person")
            let a = try #require(people.first { $0["oid"] == .string(alice.oid) })
            #expect(a["name"] == "Alice Cooper" && a["givenName"] == "Alicia" && a["familyName"] == "Example")
            #expect(a["accounts"]?.arrayValue?.compactMap { $0["policy"]?.stringValue }.sorted() == ["B2C_1_edit_profile", "B2C_1_susi"])
            // Under the sign-in policy too, the person shows the new name.
            let who = try await w.b2c(["whoami", "--policy", "B2C_1_susi", "--account", alice.email, "--output", "json"])
            #expect(who.json["person"]?["name"] == "Alice Cooper" && who.json["person"]?["givenName"] == "Alicia")
            let susiOnly = try await w.b2c(["accounts", "--policy", "B2C_1_susi", "--output", "table"])
            #expect(susiOnly.stdout.contains("Alice Cooper ") && susiOnly.stdout.contains("<alice@contoso.com>"), "\(susiOnly.stdout)")
            // The tenant has the new profile: a new sign-in's id token carries it.
            let users = try await w.admin("GET", "/users")["users"]?.arrayValue ?? []
            #expect(users.contains { $0["email"] == .string(alice.email) && $0["displayName"] == "Alice Cooper" })
        }
    }

    @Test func aNewPersonSignsUpWithAVerifiedEmailAndIsSignedIn() async throws {
        try await World.with { w in
            let dana = (email: "dana@contoso.com", password: "Dana-2026-pw!", oid: "")
            let up = try await w.b2c(
                ["signin"], as: dana,
                extra: ["B2C_AGENT_ACTION": "signup", "B2C_AGENT_GIVEN_NAME": "Dana", "B2C_AGENT_SURNAME": "Diaz"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(up.stdout.contains("Signed in as dana@contoso.com under B2C_1_susi"), "\(up.stdout)")
            let who = try await w.b2c(["whoami", "--output", "json"])
            #expect(who.json["person"]?["name"] == "Dana Diaz", "\(who.stdout)")
            // The code went to Dana's inbox (the outbox), and she can sign in with the new password.
            let sent = try await w.admin("GET", "/outbox?to=dana@contoso.com")["messages"]?.arrayValue ?? []
            #expect(sent.first?["purpose"] == "signup")
            #expect(try await w.b2c(["signin", "--prompt", "login"], as: dana, jar: "fresh").status == 0)
            // The same address again: the page refuses it after verification, and b2c stores nothing new.
            let again = try await w.b2c(
                ["signin", "--prompt", "login", "--timeout", "5"], as: dana, jar: "other",
                extra: ["B2C_AGENT_ACTION": "signup"])
            #expect(again.status != 0)
        }
    }

    @Test func cancelOnEachPageExitsTwoAndStoresNothing() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            let before = try w.storeSnapshot()
            // Every page with a Cancel: sign-in, sign-up, edit profile, reset (email) and reset (code), the last also
            // reached through the forgot-password detour of a sign-in.
            let cases: [([String], String)] = [
                (["signin", "--prompt", "login"], "cancel"), (["signin", "--prompt", "login"], "cancel-signup"),
                (["edit-profile"], "cancel"), (["reset-password"], "cancel"),
                (["reset-password"], "cancel-reset-code"), (["signin", "--prompt", "login"], "cancel-reset-code"),
            ]
            for (args, action) in cases {
                let r = try await w.b2c(args, as: alice, jar: "alice", extra: ["B2C_AGENT_ACTION": action])
                #expect(r.status == 2, "\(args) \(action): \(r.stderr)")
                #expect(r.stderr.contains("cancelled") && r.stderr.contains("AADB2C90091"), "\(args) \(action): \(r.stderr)")
            }
            let codes = try await w.admin("GET", "/outbox?to=\(alice.email)")["messages"]?.arrayValue ?? []
            #expect(codes.count == 2, "the two cancel-reset-code runs reached the code page (\(codes.count) codes sent)")
            #expect(try w.storeSnapshot() == before)
        }
    }

    @Test func resetPasswordRevokesOtherSignInsAndTokenSaysWhatToRun() async throws {
        try await World.with { w in
            #expect(try await w.b2c(["signin"], as: alice, jar: "alice").status == 0)
            // Alice is also signed in on a second machine (its own store and browser), which the reset does not touch.
            let laptop = ["B2C_HOME": w.dir.appendingPathComponent("laptop").path]
            #expect(try await w.b2c(["signin"], as: alice, jar: "laptop", extra: laptop).status == 0)
            let reset = try await w.b2c(["reset-password"], as: alice, jar: "alice", extra: ["B2C_AGENT_NEW_PASSWORD": "Alice-new-2026!x"])
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(reset.stdout.contains("Password of alice@contoso.com reset under B2C_1_reset"))
            #expect(reset.stdout.contains("b2c signin --policy B2C_1_susi --login-hint alice@contoso.com"))
            // The account stays listed; its token now needs a sign-in, and `token` says exactly which.
            let token = try await w.b2c(["token", "--account", alice.email])
            #expect(token.status == 4)
            #expect(token.stderr.contains("Run: b2c signin --policy B2C_1_susi --login-hint alice@contoso.com"), "\(token.stderr)")
            #expect(token.stdout.isEmpty)
            // On the other machine the tokens are still stored; the tenant itself refuses the revoked refresh token, and
            // b2c says the same thing to do.
            let elsewhere = try await w.b2c(["token", "--account", alice.email, "--force-refresh"], extra: laptop)
            #expect(elsewhere.status == 4 && elsewhere.stdout.isEmpty, "\(elsewhere.stderr)")
            #expect(elsewhere.stderr.contains("Run: b2c signin --policy B2C_1_susi --login-hint alice@contoso.com"), "\(elsewhere.stderr)")
            #expect(
                try await w.tokenLog().contains { $0["grantType"] == "refresh_token" && $0["outcome"] != "ok" }, "the emulator refused it")
            // The new password works (ROPC), the old one no longer does.
            let old = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", alice.email, "--password-stdin"], stdin: alice.password + "\n")
            #expect(old.status == 4 && old.stderr.contains("AADB2C90225"))
            let new = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", alice.email, "--password-stdin"], stdin: "Alice-new-2026!x\n")
            #expect(new.status == 0, "\(new.stderr)")
        }
    }

    @Test func ropcSignInStoresAnAccountAndRefusesBadCredentials() async throws {
        try await World.with { w in
            let ok = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", bob.email, "--password-stdin"], stdin: bob.password + "\n")
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(
                ok.stdout.contains("Signed in as bob@contoso.com under B2C_1_ROPC_Auth (account \(bob.oid)-b2c_1_ropc_auth.\(tenantID))"))
            #expect(!ok.stdout.contains(bob.password) && !ok.stderr.contains(bob.password))
            let token = try await w.b2c(["token", "--policy", "B2C_1_ROPC_Auth", "--force-refresh", "--format", "json"])
            #expect(token.status == 0 && token.json["fromCache"] == false, "\(token.stderr)")
            let before = try w.storeSnapshot()

            let wrong = try await w.b2c(
                ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", bob.email, "--password-stdin"], stdin: "nope\n")
            #expect(wrong.status == 4)
            #expect(wrong.stderr.contains("refused the username or password (AADB2C90225"), "\(wrong.stderr)")
            let unknown = try await w.b2c(["signin", "--username", "nobody@contoso.com", "--password-stdin"], stdin: "whatever\n")
            #expect(unknown.status == 4 && unknown.stderr.contains("AADB2C90225"), "ROPC with the default ropc policy: \(unknown.stderr)")
            let notRopc = try await w.b2c(["signin", "--policy", "B2C_1_susi", "--username", bob.email, "--password-stdin"], stdin: "x\n")
            #expect(notRopc.status == 64 && notRopc.stderr.contains("role ropc"), "\(notRopc.stderr)")
            // A password as an argument gets the same specific refusal as a client secret (issue 22, item 13), in both forms.
            for args in [["--password", bob.password], ["--password=\(bob.password)"]] {
                let argument = try await w.b2c(["signin", "--policy", "B2C_1_ROPC_Auth", "--username", bob.email] + args)
                #expect(
                    argument.status == 64 && argument.stderr.contains("never takes a password as an argument")
                        && argument.stderr.contains("--password-stdin"), "\(argument.stderr)")
                #expect(!argument.stderr.contains(bob.password) && !argument.stdout.contains(bob.password))
            }
            #expect(try w.storeSnapshot() == before, "refused before anything was sent")
            let noUser = try await w.b2c(["signin", "--password-stdin"], stdin: "x\n")
            #expect(noUser.status == 64 && noUser.stderr.contains("--password-stdin needs --username"))
            let noTTY = try await w.b2c(["signin", "--policy", "B2C_1_ROPC_Auth", "--username", bob.email])
            #expect(noTTY.status == 64 && noTTY.stderr.contains("--password-stdin"), "\(noTTY.stderr)")
            let empty = try await w.b2c(["signin", "--policy", "B2C_1_ROPC_Auth", "--username", bob.email, "--password-stdin"], stdin: "")
            #expect(empty.status == 64)
            #expect(try w.storeSnapshot() == before)
        }
    }

    @Test func nativeAuthWithPasswordStoresAnAccountUnderTheNativeName() async throws {
        try await World.with { w in
            let r = try await w.b2c(["signin", "--native", "--username", alice.email, "--password-stdin"], stdin: alice.password + "\n")
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("Signed in as alice@contoso.com under native (account \(alice.oid).\(tenantID))"), "\(r.stdout)")
            let accounts = try await w.b2c(["accounts", "--policy", "native", "--output", "json"])
            let listed = accounts.json["people"]?.arrayValue?.first?["accounts"]?.arrayValue?.first
            #expect(listed?["policy"] == "native" && listed?["refreshToken"] == true)
            let refreshed = try await w.b2c(["token", "--policy", "native", "--force-refresh", "--format", "json"])
            #expect(
                refreshed.status == 0 && refreshed.json["fromCache"] == false
                    && refreshed.json["accountId"]?.stringValue == "\(alice.oid).\(tenantID)",
                "\(refreshed.stderr)")
            let api = try await w.b2c(["call-api", "--api", "hello", "--policy", "native"])
            #expect(api.status == 0 && api.json["name"] == "Alice Example", "\(api.stderr)")
            let before = try w.storeSnapshot()

            let wrong = try await w.b2c(["signin", "--native", "--username", alice.email, "--password-stdin"], stdin: "nope\n")
            #expect(wrong.status == 4 && wrong.stderr.contains("wrong password for alice@contoso.com"), "\(wrong.stderr)")
            let unknown = try await w.b2c(["signin", "--native", "--username", "nobody@contoso.com", "--password-stdin"], stdin: "x\n")
            #expect(unknown.status == 4 && unknown.stderr.contains("there is no account nobody@contoso.com"), "\(unknown.stderr)")
            // The remedy is the native sign-up b2c has, not the browser.
            #expect(unknown.stderr.contains("b2c signup --username nobody@contoso.com"), "\(unknown.stderr)")
            let noUser = try await w.b2c(["signin", "--native"])
            #expect(noUser.status == 64)
            #expect(try w.storeSnapshot() == before)
        }
    }

    @Test func nativeAuthWithOneTimeCodeResendsAndRePromptsOnAWrongCode() async throws {
        try await World.with(seed: .codeSignIn) { w in
            let p = try LiveProcess(
                b2cBinary, ["signin", "--native", "--username", bob.email, "--otp-stdin"], environment: w.environment(as: nil))
            try await p.waitFor("an 8-digit code was sent to b***b@co*****.com; reading it from stdin")
            let (_, second) = try await resendThenWrongThenRight(p, w)  // the first code no longer works after a resend
            let r = await p.finish()
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("Signed in as bob@contoso.com under native"))
            #expect(!r.stderr.contains(second))
            // "sent" is said only when a code was sent: the first one and the resend, not after the wrong code.
            #expect(r.stderr.components(separatedBy: "code was sent").count - 1 == 2, "\(r.stderr)")
        }
    }

    @Test func codesAndPasswordsTypedAtTheTerminalPrompt() async throws {
        try await World.with { w in
            // Native auth with neither --password-stdin nor --otp-stdin: b2c asks on the terminal for what the tenant
            // chose. The default user flow is "Email with password": the password…
            let pw = try LiveProcess(
                b2cBinary, ["signin", "--native", "--username", bob.email], environment: w.environment(as: nil), terminal: true)
            try await pw.waitFor("Password for \(bob.email): ")
            pw.write(bob.password)
            let pwDone = await pw.finish()
            #expect(pwDone.status == 0 && pwDone.stdout.contains("Signed in as bob@contoso.com under native"), "\(pwDone.stderr)")
            #expect(!pw.echoed.contains(bob.password), "the password was echoed: \(pw.echoed.debugDescription)")
            // …and a client that offers only codes is sent to the browser: the user flow offers no code sign-in.
            try w.editConfig { o in
                var native = o["nativeAuth"]?.objectValue ?? [:]
                native["challengeTypes"] = ["oob"]
                o["nativeAuth"] = .object(native)
            }
            let codesOnly = try await w.b2c(["signin", "--native", "--username", bob.email, "--otp-stdin"], stdin: "12345678\n")
            #expect(codesOnly.status != 0 && codesOnly.stderr.contains("browser"), "\(codesOnly.stderr)")
            // ROPC without --password-stdin: the password prompt turns the terminal's echo off.
            let ropc = try LiveProcess(
                b2cBinary, ["signin", "--policy", "B2C_1_ROPC_Auth", "--username", alice.email], environment: w.environment(as: nil),
                terminal: true)
            try await ropc.waitFor("Password for \(alice.email): ")
            ropc.write(alice.password)
            let typed = await ropc.finish()
            #expect(typed.status == 0, "\(typed.stderr)")
            #expect(typed.stdout.contains("Signed in as alice@contoso.com under B2C_1_ROPC_Auth"))
            #expect(
                !ropc.echoed.contains(alice.password) && !typed.stderr.contains(alice.password) && !typed.stdout.contains(alice.password),
                "the password was echoed: \(ropc.echoed.debugDescription)")
        }
        // A user flow of "Email one-time passcode": an emailed code, whatever else the client could take.
        try await World.with(seed: .codeSignIn) { w in
            let p = try LiveProcess(
                b2cBinary, ["signin", "--native", "--username", bob.email], environment: w.environment(as: nil), terminal: true)
            try await p.waitFor("Enter the 8-digit code sent to b***b@co*****.com (or 'resend'): ")
            let (_, second) = try await resendThenWrongThenRight(p, w, wrong: "00000000")
            let r = await p.finish()
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("Signed in as bob@contoso.com under native"))
            #expect(r.stderr.components(separatedBy: "Enter the 8-digit code").count - 1 == 3, "asked three times: \(r.stderr)")
            #expect(p.echoed.contains(second), "codes are echoed as they are typed (echo stays on there)")
        }
    }

    @Test func nativeAuthStopsAfterThreeWrongCodesAndOnAnExpiredContinuationToken() async throws {
        try await World.with(seed: .codeSignIn) { w in
            let wrong = try await w.b2c(
                ["signin", "--native", "--username", bob.email, "--otp-stdin"], stdin: "11111111\n22222222\n33333333\n44444444\n")
            #expect(wrong.status == 4, "\(wrong.stderr)")
            #expect(
                wrong.stderr.contains("the code was wrong 3 times")
                    && wrong.stderr.contains("Run: b2c signin --native --username bob@contoso.com"))
            let noMore = try await w.b2c(["signin", "--native", "--username", bob.email, "--otp-stdin"], stdin: "")
            #expect(noMore.status == 2 && noMore.stderr.contains("no code was entered"))

            let p = try LiveProcess(
                b2cBinary, ["signin", "--native", "--username", bob.email, "--otp-stdin"], environment: w.environment(as: nil))
            try await p.waitFor("code was sent")
            let code = try await latestCode(w, bob.email)
            try await w.advanceClock(601)  // past the continuation token's lifetime
            p.write(code)
            let r = await p.finish()
            #expect(r.status == 4, "\(r.stderr)")
            #expect(r.stderr.contains("took too long") && r.stderr.contains("expired"), "\(r.stderr)")
            #expect(try await w.b2c(["accounts", "--output", "json"]).json["people"]?.arrayValue?.isEmpty == true)
        }
    }

    /// The code dialogue: ask for a new code, type a wrong one (by default the first code, which the resend voided),
    /// then the right one. Returns the two codes the tenant sent.
    func resendThenWrongThenRight(_ p: LiveProcess, _ w: World, wrong: String? = nil) async throws -> (first: String, second: String) {
        let first = try await latestCode(w, bob.email)
        p.write("resend")
        try await p.waitFor("a new code was sent")
        p.write(wrong ?? first)
        try await p.waitFor("that code is not right (2 attempts left)")
        let second = try await latestCode(w, bob.email)
        #expect(second != first)
        p.write(second)
        return (first, second)
    }

    func latestCode(_ w: World, _ email: String) async throws -> String {
        let messages = try await w.admin("GET", "/outbox?to=\(email)")["messages"]?.arrayValue ?? []
        return try #require(messages.first?["code"]?.stringValue, "the outbox is newest first")
    }
}
