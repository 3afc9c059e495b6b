import B2CProtocol
import Foundation
import Hummingbird

/// A custom policy's `PhoneFactorProtocolProvider` profile: B2C's phone factor page (`data-name="Phonefactor"`, the same
/// page as a user flow's), a code by SMS or voice to the number on record or to one entered (`ManualPhoneNumberEntryAllowed`),
/// its outputs `Verified.OfficePhone` and `newPhoneNumberEntered`.
extension CustomPolicyStep {
    /// The page, at the state's stage: the number (on record, masked, or to enter), or the code sent.
    func phoneFactorPage(_ tx: AuthorizeTransaction, state: PolicyJourneyState, error: String? = nil) -> Response {
        let prefix = "/\(tx.tenantSegment)/\(tx.policy.lowercased())/emulator/"
        var values: [String: Any] = [
            "countries": PageRenderer.countries,
            // Every form of the page posts to the policy's page; what a form carries says what it asks.
            "action": PageURLs(prefix: prefix + "policy", query: "", fixed: true),
        ]
        if let phone = state.phoneOnRecord {
            values["maskedNumber"] = String(repeating: "X", count: max(0, phone.count - 4)) + phone.suffix(4)
        }
        if state.codeHash != nil, let sent = state.codeSentTo { values["sentTo"] = sent }
        if let error { values["error"] = error }
        return pages.page("phonefactor", tx, values)
    }

    /// The phone page's forms: `channel` sends a code (to the number on record, or the one typed), `verificationCode`
    /// checks it; the profile's outputs then go into the bag. Nil while the page stays.
    func phoneFactor(
        _ form: [String: String], _ state: inout PolicyJourneyState, _ tx: AuthorizeTransaction, profile: TechnicalProfile, run: PolicyRun
    ) throws -> (page: Response?, done: Bool) {
        let strings = pages.strings(tx)
        if let typed = form["verificationCode"] {
            guard let phone = state.codeSentTo, let hash = state.codeHash,
                EmulatorStore.hash(typed.trimmingCharacters(in: .whitespaces)) == hash
            else {
                run.note("phone code refused", [:])
                return (phoneFactorPage(tx, state: state, error: strings["error_incorrect_code"]), false)
            }
            let entered = state.phoneOnRecord == nil
            try run.outputClaims(
                profile, ["Verified.OfficePhone": .string(phone), "newPhoneNumberEntered": .bool(entered)], &state.claims)
            run.note(
                "technical profile \(profile.id)",
                ["handler": .string(profile.handler.rawValue), "claims": PolicyRun.recorded(state.claims)])
            return (nil, true)
        }
        let phone: String
        if let onRecord = state.phoneOnRecord {
            phone = onRecord
        } else {
            guard profile.metadata("ManualPhoneNumberEntryAllowed")?.lowercased() == "true" else {
                throw PageError(code: "AADB2C90145", message: "No phone number is registered for you.")
            }
            let typed = ((form["countryCode"] ?? "") + (form["number"] ?? "")).filter { $0 == "+" || $0.isNumber }
            guard EmulatorSeed.isE164(typed) else {
                return (phoneFactorPage(tx, state: state, error: strings["error_invalid_number"]), false)
            }
            phone = typed
        }
        let now = clock.now()
        let code = try store.mfaKnobs.fixedCode ?? Random.digits(6)
        try store.outbox.send(
            to: phone, purpose: "mfa", code: code, now: now, channel: form["channel"] == "voice" ? .voice : .sms,
            expiresAt: now + SecondFactorStep.mfaCodeLifetime, journey: tx.id)
        (state.codeSentTo, state.codeHash) = (phone, EmulatorStore.hash(code))
        run.note("code sent", ["to": .string(phone)])
        return (phoneFactorPage(tx, state: state), false)
    }
}
