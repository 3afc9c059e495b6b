import B2CProtocol
import Foundation

/// What a password typed at sign-in comes to.
enum PasswordVerdict {
    case noUser
    case wrongPassword
    case user(EmulatorStore.UserRecord)
    /// The password is right (or the migration function vouched for it), but the account is disabled (`AccountRule`).
    case disabled
    /// The app's migration function found the legacy password right but too weak (`UpdatePassword`): a new one is needed.
    case mustChangePassword
    /// The app's migration function blocked the sign-in (`Block`), with its title and message.
    case blocked(title: String, message: String)
    /// The migration function could not be asked, or its answer broke the contract (a wrong nonce among them).
    case failed(ExtensionFailure)
}

extension JourneyCallouts {
    /// The one check of a password typed at sign-in — the browser's page and native authentication alike: the directory's,
    /// and, for a person still marked for migration (`migrationProperty` true) where an `OnPasswordSubmit` listener covers
    /// the app, the app's function (just-in-time password migration). A right password on record migrates the person
    /// silently; `MigratePassword` keeps the typed password and clears the mark, so the function is never asked again.
    /// A right password for a disabled account is refused as such (`AccountRule`); a wrong one says no more than that.
    func submitPassword(_ identifier: String, _ password: String, tx: CalloutContext) async throws -> PasswordVerdict {
        let verdict = try await checkTypedPassword(identifier, password, tx: tx)
        if case .user(let user) = verdict, AccountRule.disabled(user) {
            store.journeys.note(tx.journeyID, .decision, "sign-in refused", ["why": "the account is disabled"], user: user.email)
            return .disabled
        }
        return verdict
    }

    private func checkTypedPassword(_ identifier: String, _ password: String, tx: CalloutContext) async throws -> PasswordVerdict {
        let check = try store.passwordCheck(email: identifier, password: password)
        let verdict: PasswordVerdict =
            switch check {
            case .noUser: .noUser
            case .wrongPassword: .wrongPassword
            case .user(let user): .user(user)
            }
        guard seed.tenant.externalId, let ext = authenticationExtension(.onPasswordSubmit, clientId: tx.clientId),
            let property = ext.migrationProperty, let user = try store.user(email: identifier)
        else { return verdict }
        let flag = storedAttributeName(property)
        guard user.attributes[flag] == .bool(true) else { return verdict }
        if case .user = check {
            try store.migratePassword(oid: user.oid, password: nil, flag: flag)
            store.journeys.note(tx.journeyID, .decision, "migrated", ["why": "the password on record was typed"], user: user.email)
            return verdict
        }
        let nonce = UUID().uuidString.lowercased()
        let context: String
        do {
            let key = try PasswordEncryption.publicKey(file: ext.encryptionCertificate ?? "")
            context = try PasswordEncryption.encrypt(
                ["user-password": .string(password), "username": .string(identifier), "nonce": .string(nonce)], to: key,
                algorithm: ext.encryptionAlgorithm)
        } catch {
            return .failed(
                ExtensionFailure(
                    code: 1_003_001, name: "CustomExtensionUnexpectedError",
                    detail: "The password could not be encrypted to \(ext.encryptionCertificate ?? "the certificate"): \(error)."))
        }
        let person: JSONValue = [
            "id": .string(user.oid), "displayName": .string(user.displayName), "givenName": .string(user.givenName),
            "surname": .string(user.surname), "mail": .string(user.email), "userPrincipalName": .string("\(user.oid)@\(tenantName)"),
            "userType": "Member", "createdDateTime": .string(ISO8601.string(epoch: user.createdAt)),
        ]
        let answer = await callExtension(
            ext, tx: tx, data: ["encryptedPasswordContext": .string(context)], user: person, nonce: nonce)
        switch answer {
        case .failure(let failure): return .failed(failure)
        case .success(let action):
            switch (action["@odata.type"]?.stringValue ?? "").components(separatedBy: ".").last ?? "" {
            case "MigratePassword":
                // Microsoft's table: a right password that is too weak for the tenant goes the UpdatePassword way.
                guard SignUpStep.passwordProblem(password) == nil else { return .mustChangePassword }
                try store.migratePassword(oid: user.oid, password: password, flag: flag)
                return .user(try store.user(oid: user.oid) ?? user)
            case "UpdatePassword": return .mustChangePassword
            case "Block":
                return .blocked(
                    title: action["title"]?.stringValue ?? "Sign-in blocked",
                    message: action["message"]?.stringValue ?? "Your sign-in was blocked.")
            default: return .wrongPassword  // Retry: the password is not the legacy one either
            }
        }
    }
}

extension EmulatorStore {
    /// A just-in-time migration: the typed password kept (nil: the one on record stays) and the mark set to false, in one
    /// transaction. The person's grants stay: nothing about them changed.
    func migratePassword(oid: String, password: String?, flag: String) throws {
        guard var user = try user(oid: oid) else { return }
        user.attributes[flag] = .bool(false)
        let attributes = JSONValue.object(user.attributes).serialized()
        try db.write { db in
            try db.execute(sql: "UPDATE users SET attributes = ? WHERE oid = ?", arguments: [attributes, oid])
            if let password {
                let credential = Self.passwordCredential(password)
                try db.execute(
                    sql: "UPDATE users SET password_salt = ?, password_hash = ? WHERE oid = ?",
                    arguments: [credential.salt, credential.hash, oid])
            }
        }
    }
}
