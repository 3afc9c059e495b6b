import B2CProtocol
import Foundation

/// A code the journey issued: its hash, when it expires, the wrong answers so far and how many codes the identifier has
/// had. Kept in the journey's state (the transaction, on the tenant's side), never in the claims bag.
struct IssuedCode: Codable, Sendable, Equatable {
    var hash: String
    var expiresAt: Int
    var wrongAnswers = 0
    var issued = 1
}

/// The two code services of custom policies (reference: b2c-journeys.md §1.4): `OneTimePasswordProtocolProvider`
/// (`GenerateCode` gives the code as the `otpGenerated` claim, for the policy to send itself; `VerifyCode` checks
/// `otpToVerify`) and `AadSsprProtocolProvider` (B2C's own email service: `SendCode` mails the code to `emailAddress`,
/// here to the tenant's outbox; `VerifyCode` checks `verificationCode`). A failure is the calling page's message, from
/// the profile's metadata.
extension PolicyRun {
    func oneTimePassword(
        _ profile: TechnicalProfile, _ inputs: [String: ClaimValue], _ codes: inout [String: IssuedCode]
    ) throws -> [String: ClaimValue] {
        let identifier = inputs["identifier"]?.text ?? ""
        let number = { (key: String, fallback: Int, range: ClosedRange<Int>) in
            min(max(Int(profile.metadata(key) ?? "") ?? fallback, range.lowerBound), range.upperBound)
        }
        switch profile.metadata("Operation") ?? "" {
        case "GenerateCode":
            let lifetime = number("CodeExpirationInSeconds", 600, 60...1200)
            let length = number("CodeLength", 6, 4...10)
            let generations = number("NumCodeGenerationAttempts", 10, 1...100)
            if let previous = codes[identifier], previous.expiresAt > now, previous.issued >= generations {
                throw onPage(profile, "UserMessageIfMaxNumberOfCodeGenerated", "You have requested too many codes. Please try again later.")
            }
            let code = try store.mfaKnobs.fixedCode.map { String($0.prefix(length)) } ?? Self.randomCode(length, profile)
            let issued = (codes[identifier].map { $0.expiresAt > now ? $0.issued : 0 } ?? 0) + 1
            codes[identifier] = IssuedCode(hash: EmulatorStore.hash(code), expiresAt: now + lifetime, issued: issued)
            return ["otpGenerated": .string(code)]
        case "VerifyCode":
            try verify(
                inputs["otpToVerify"]?.text ?? "", for: identifier, &codes, profile: profile,
                attempts: number("NumRetryAttempts", 5, 1...10),
                messages: (
                    wrong: ("UserMessageIfInvalidCode", "Wrong code has been entered. Please try again."),
                    expired: ("UserMessageIfSessionDoesNotExist", "The code has expired. Please request a new code."),
                    exhausted: ("UserMessageIfMaxRetryAttempted", "You have entered the wrong code too many times. Please try again later.")
                ))
            return [:]
        case let other:
            throw CustomPolicyError(
                code: "AADB2C90250",
                message: "The technical profile '\(profile.id)' asks the OTP service for '\(other)', not GenerateCode or VerifyCode.")
        }
    }

    func sspr(
        _ profile: TechnicalProfile, _ inputs: [String: ClaimValue], _ codes: inout [String: IssuedCode]
    ) throws -> [String: ClaimValue] {
        let address = (inputs["emailAddress"]?.text ?? "").lowercased()
        switch profile.metadata("Operation") ?? "" {
        case "SendCode":
            guard !address.isEmpty else {
                throw CustomPolicyError(code: "AADB2C90075", message: "An email address is needed to send a code.", onPage: true)
            }
            let code = try store.mfaKnobs.fixedCode ?? Random.digits(6)
            let issued = (codes[address].map { $0.expiresAt > now ? $0.issued : 0 } ?? 0) + 1
            codes[address] = IssuedCode(hash: EmulatorStore.hash(code), expiresAt: now + SecondFactorStep.mfaCodeLifetime, issued: issued)
            try store.outbox.send(
                to: address, purpose: "verification", code: code, now: now, expiresAt: now + SecondFactorStep.mfaCodeLifetime,
                journey: journeyID)
            return [:]
        case "VerifyCode":
            try verify(
                inputs["verificationCode"]?.text ?? "", for: address, &codes, profile: profile, attempts: 5,
                messages: (
                    wrong: ("UserMessageIfVerificationFailedRetryAllowed", "That code is incorrect. Please try again."),
                    expired: ("UserMessageIfChallengeExpired", "That code is expired. Please request a new code."),
                    exhausted: (
                        "UserMessageIfVerificationFailedNoRetry", "You've made too many incorrect attempts. Please try again later."
                    )
                ))
            return [:]
        case let other:
            throw CustomPolicyError(
                code: "AADB2C90250",
                message: "The technical profile '\(profile.id)' asks the SSPR service for '\(other)', not SendCode or VerifyCode.")
        }
    }

    typealias Message = (key: String, fallback: String)

    /// A typed code against the one issued to `identifier`: right (and then spent), wrong (counted), expired or used up.
    private func verify(
        _ typed: String, for identifier: String, _ codes: inout [String: IssuedCode], profile: TechnicalProfile, attempts: Int,
        messages: (wrong: Message, expired: Message, exhausted: Message)
    ) throws {
        guard var issued = codes[identifier], issued.expiresAt > now else {
            throw onPage(profile, messages.expired.key, messages.expired.fallback)
        }
        guard issued.wrongAnswers < attempts else { throw onPage(profile, messages.exhausted.key, messages.exhausted.fallback) }
        guard EmulatorStore.hash(typed.trimmingCharacters(in: .whitespaces)) == issued.hash else {
            issued.wrongAnswers += 1
            codes[identifier] = issued
            note("code refused", ["technicalProfile": .string(profile.id), "wrongAnswers": JSONValue(issued.wrongAnswers)])
            if issued.wrongAnswers >= attempts { throw onPage(profile, messages.exhausted.key, messages.exhausted.fallback) }
            throw onPage(profile, messages.wrong.key, messages.wrong.fallback)
        }
        codes[identifier] = nil
    }

    private func onPage(_ profile: TechnicalProfile, _ key: String, _ fallback: String) -> CustomPolicyError {
        CustomPolicyError(code: "AADB2C90080", message: profile.metadata(key) ?? fallback, onPage: true)
    }

    /// A code of `CharacterSet` (B2C's ranges, `0-9` by default; `a-z`, `A-Z` and literal characters also).
    private static func randomCode(_ length: Int, _ profile: TechnicalProfile) throws -> String {
        var alphabet: [Character] = []
        let spec = Array(profile.metadata("CharacterSet") ?? "0-9")
        var i = 0
        while i < spec.count {
            if i + 2 < spec.count, spec[i + 1] == "-", let lo = spec[i].asciiValue, let hi = spec[i + 2].asciiValue, lo <= hi {
                alphabet += (lo...hi).map { Character(UnicodeScalar($0)) }
                i += 3
            } else {
                if spec[i] != "," { alphabet.append(spec[i]) }
                i += 1
            }
        }
        if alphabet.isEmpty { alphabet = Array("0123456789") }
        return String((0..<length).map { _ in alphabet.randomElement()! })
    }
}
