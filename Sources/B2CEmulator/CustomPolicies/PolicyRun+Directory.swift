import B2CProtocol
import Foundation

/// The directory as a custom policy's `AzureActiveDirectoryProvider` profiles see it: a person found by object id, sign-in
/// name or `alternativeSecurityId`, Graph's property names as partner claims.
extension PolicyRun {
    /// `AzureActiveDirectoryProvider`: read, write or delete a person of the directory, with B2C's `RaiseErrorIf…` rules.
    func directory(
        _ profile: TechnicalProfile, _ inputs: [String: ClaimValue], _ bag: [String: ClaimValue]
    ) throws -> [String: ClaimValue] {
        var user = try inputs["objectId"].flatMap { try store.user(oid: $0.text) }
        if user == nil, let name = inputs["signInNames.emailAddress"] ?? inputs["signInNames.userName"] ?? inputs["email"] {
            user = try store.user(email: name.text)
        }
        let alternative = inputs["alternativeSecurityId"].flatMap { Self.alternativeSecurityId($0.text) }
        if user == nil, let alternative {
            user = try store.federatedUser(FederatedIdentity(issuer: alternative.issuer, subject: alternative.subject, email: ""))
        }
        let operation = profile.metadata("Operation") ?? "Read"
        switch operation {
        case "Read":
            guard let user else {
                if profile.metadata("RaiseErrorIfClaimsPrincipalDoesNotExist") == "true" {
                    throw CustomPolicyError(
                        code: "AADB2C99002",
                        message: profile.metadata("UserMessageIfClaimsPrincipalDoesNotExist")
                            ?? "An account could not be found for the provided user ID.", onPage: true)
                }
                return [:]
            }
            return try directoryClaims(user)
        case "Write":
            if user != nil, profile.metadata("RaiseErrorIfClaimsPrincipalAlreadyExists") == "true" {
                throw CustomPolicyError(
                    code: "AADB2C90052",
                    message: profile.metadata("UserMessageIfClaimsPrincipalAlreadyExists")
                        ?? "A user with the specified ID already exists. Please choose a different one.", onPage: true)
            }
            var persisted: [String: String] = [:]
            for claim in profile.persistedClaims {
                guard let ref = claim["ClaimTypeReferenceId"].map(claimTypeID) else { continue }
                if let v = value(of: claim, ref, in: bag) { persisted[claim["PartnerClaimType"] ?? ref] = v.text }
            }
            let written = try write(user, persisted, alternative: alternative)
            if let phone = persisted["strongAuthenticationPhoneNumber"], !phone.isEmpty {
                try store.setPhone(oid: written.oid, phone, enrolled: true)
            }
            var out = try directoryClaims(written)
            out["newClaimsPrincipalCreated"] = .bool(user == nil)
            return out
        case "DeleteClaimsPrincipal":
            if let user { _ = try store.deleteUser(oid: user.oid) }
            return [:]
        default:
            throw CustomPolicyError(
                code: "AADB2C90250", message: "The directory operation '\(operation)' of '\(profile.id)' is not one the tenant runs.")
        }
    }

    /// A new local account, or the person's changed names, password and extension attributes.
    private func write(
        _ user: EmulatorStore.UserRecord?, _ persisted: [String: String], alternative: (issuer: String, subject: String)?
    ) throws -> EmulatorStore.UserRecord {
        var attributes = user?.attributes ?? [:]
        for (name, value) in persisted where name.hasPrefix("extension_") { attributes[name] = .string(value) }
        let oid: String
        if let user {
            oid = user.oid
            try store.updateProfile(
                oid: oid, displayName: persisted["displayName"] ?? user.displayName, givenName: persisted["givenName"] ?? user.givenName,
                surname: persisted["surname"] ?? user.surname)
            if let password = persisted["password"] { try store.setPassword(oid: oid, password: password, now: now) }
        } else if let alternative = alternative ?? persisted["alternativeSecurityId"].flatMap(Self.alternativeSecurityId) {
            // A federated person: the provider and subject are the account's key; the address, when the profile keeps one.
            let email =
                persisted["email"] ?? persisted["otherMails"] ?? persisted["userPrincipalName"]
                ?? "\(alternative.subject)@\(alternative.issuer)"
            oid = try store.createFederatedUser(
                FederatedIdentity(issuer: alternative.issuer, subject: alternative.subject, email: email),
                displayName: persisted["displayName"] ?? "unknown", givenName: persisted["givenName"] ?? "",
                surname: persisted["surname"] ?? "", now: now
            ).oid
        } else {
            guard let email = persisted["signInNames.emailAddress"] ?? persisted["signInNames.userName"],
                let password = persisted["password"]
            else {
                throw CustomPolicyError(
                    code: "AADB2C90250", message: "A new account needs signInNames.emailAddress and password among the persisted claims.")
            }
            oid = try store.createUser(
                email: email, password: password, displayName: persisted["displayName"] ?? "unknown",
                givenName: persisted["givenName"] ?? "", surname: persisted["surname"] ?? "", now: now
            ).oid
        }
        if attributes != (user?.attributes ?? [:]) { try store.setAttributes(oid: oid, attributes) }
        guard let written = try store.user(oid: oid) else {
            throw CustomPolicyError(code: "AADB2C99002", message: "The account was removed while it was written.")
        }
        return written
    }

    /// B2C's `alternativeSecurityId` (`CreateAlternativeSecurityId`'s JSON: the provider and its base64 subject).
    static func alternativeSecurityId(_ text: String) -> (issuer: String, subject: String)? {
        guard let json = try? JSONValue.parse(text), let issuer = json["issuer"]?.stringValue,
            let key = json["issuerUserId"]?.stringValue, let data = Data(base64Encoded: key),
            let subject = String(data: data, encoding: .utf8)
        else { return nil }
        return (issuer, subject)
    }

    /// The directory's profile of a person, with the phone number MFA uses (`strongAuthenticationPhoneNumber`).
    func directoryClaims(_ user: EmulatorStore.UserRecord) throws -> [String: ClaimValue] {
        var c = Self.directoryClaims(user, tenantName: tenantName)
        if let phone = try store.mfaState(oid: user.oid).phone { c["strongAuthenticationPhoneNumber"] = .string(phone) }
        return c
    }

    /// A person as the directory's profile names them (Graph's property names, which policies use as partner claims).
    static func directoryClaims(_ user: EmulatorStore.UserRecord, tenantName: String) -> [String: ClaimValue] {
        var c: [String: ClaimValue] = [
            "objectId": .string(user.oid), "displayName": .string(user.displayName), "givenName": .string(user.givenName),
            "surname": .string(user.surname), "userPrincipalName": .string("\(user.oid)@\(tenantName)"),
            "accountEnabled": .bool(user.accountEnabled), "passwordProfile.forceChangePasswordNextSignIn": .bool(user.passwordChangeDue),
            "mail": .string(user.email), "otherMails": .collection([user.email]),
            "refreshTokensValidFromDateTime": .dateTime(Date(timeIntervalSince1970: Double(max(user.tokensValidFrom, user.createdAt)))),
        ]
        if user.idp == nil { c["signInNames.emailAddress"] = .string(user.email) }
        for (name, value) in user.attributes {
            let key = name.hasPrefix("extension_") ? name : "extension_\(name)"
            c[key] = value.stringValue.map(ClaimValue.string) ?? value.boolValue.map(ClaimValue.bool) ?? .string(value.serialized())
        }
        return c
    }

    // MARK: protocols answered locally

    /// The starter pack's `login-NonInteractive`: an OpenID Connect password grant to `login.microsoftonline.com`, answered
    /// here against the directory and never sent out.
    /// A profile to `login.microsoftonline.com` that sends a password (the pack's `password` and `grant_type` inputs); a
    /// federation with an Entra ID tenant, which names the same host, is not one.
    static func isLocalPasswordCheck(_ profile: TechnicalProfile) -> Bool {
        let host = [profile.metadata("METADATA"), profile.metadata("authorization_endpoint")].contains {
            $0?.lowercased().contains("login.microsoftonline.com") == true
        }
        return host && profile.inputClaims.contains { ($0["PartnerClaimType"] ?? $0["ClaimTypeReferenceId"]) == "password" }
    }
}
