import B2CProtocol
import Foundation
import Hummingbird

/// What the pages send back (`/{tenant}/{policy}/emulator/{name}`): the transaction loaded, the request recorded, then
/// handed to the step type the transaction's step and the request name say — the one dispatcher every page passes.
extension AuthorizeEndpoint {
    func page(_ name: String, _ req: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy) async throws -> Response {
        var request = req
        let form = req.method == .post ? try await request.formParameters() : [:]
        guard let txID = try form["tx"] ?? req.queryParameters()["tx"], let tx = try store.transaction(id: txID, now: clock.now()) else {
            throw PageError(
                code: "AADB2C90208",
                message: "This sign-in page has expired or was already used. Go back to your application and start again.")
        }
        guard tx.policy.caseInsensitiveCompare(policy.id) == .orderedSame else {
            throw PageError(code: nil, message: "This page belongs to another user flow ('\(tx.policy)').")
        }
        // The orchestration step the transaction waits at (its index), as the recorder's "step N: name".
        let steps = JourneyRunner(self).journey(tx, policy: policy).steps
        let waitingAt = steps.indices.contains(tx.stepIndex) ? "step \(tx.stepIndex + 1): \(steps[tx.stepIndex].step.rawValue)" : "none"
        store.journeys.note(
            tx.id, .step, name,
            [
                "method": .string(req.method.rawValue), "form": .object(JourneyRecorder.form(form)), "at": .string(tx.step.name),
                "orchestrationStep": .string(waitingAt),
            ])
        return try await recording(tx.id) { try await pageStep(name, req, request, context, policy: policy, form: form, tx: tx) }
    }

    /// One page's request, its transaction found: the step it belongs to.
    private func pageStep(
        _ name: String, _ req: Request, _ request: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy,
        form: [String: String], tx: AuthorizeTransaction
    ) async throws -> Response {
        var tx = tx
        // The one rule of which page may come next: the step the transaction is at says which requests it takes.
        guard tx.step.accepts.contains(name) else {
            throw PageError(
                code: nil,
                message: "This page is not the step this sign-in is at (it waits for \(tx.step.name)). Go back to your application "
                    + "and start again.")
        }
        let signsUp = policy.kind == .signUpSignIn || policy.kind == .signUp
        let runner = JourneyRunner(self)
        let visit = Visit(request, context)
        func goOn(_ outcome: StepOutcome, after step: Journey.Step) async throws -> Response {
            try await runner.proceed(outcome, after: step, policy: policy, visit)
        }
        switch (name, req.method.rawValue) {
        case ("policy", "POST"), ("policysignup", "GET"):
            return try await goOn(CustomPolicyStep(self).resume(name, form, tx, policy: policy), after: .customPolicy)
        case ("signin", "GET"):
            return pages.signInPage(tx, policy: policy)
        case ("signin", "POST"):
            return try await goOn(SignInStep(self).resume(form, tx, policy: policy), after: .combinedSignIn)
        case ("idp", "POST"):
            let firstPage = runner.journey(tx, policy: policy).steps.first?.step ?? .combinedSignIn
            return try await goOn(FederationStep(self).providerChosen(form, tx, policy: policy), after: firstPage)
        case ("passwordchange", "POST"):
            return try await goOn(PasswordChangeStep(self).resume(form, tx, policy: policy), after: .passwordChange)
        case ("socialsignup", "POST"):
            return try await goOn(SocialSignUpStep(self).resume(form, tx, policy: policy), after: .socialSignUp)
        case ("mfasend", "POST"), ("mfaverify", "POST"), ("mfacontinue", "POST"), ("mfaqr", "GET"):
            return try await goOn(SecondFactorStep(self).resume(name, form, tx, policy: policy, request: request), after: .secondFactor)
        case ("forgot", "GET"):
            try store.deleteTransaction(id: tx.id)
            return redirectError(
                tx.reply, OAuthFailure(error: "access_denied", code: "AADB2C90118", message: "The user has forgotten their password."))
        case ("cancel", _):
            try store.deleteTransaction(id: tx.id)
            return redirectError(
                tx.reply,
                OAuthFailure(
                    error: "access_denied", code: "AADB2C90091", message: "The user has cancelled entering self-asserted information."))
        case ("signup", "GET") where signsUp:
            // The combined page's sign-up link: the journey's sign-up step.
            let journey = runner.journey(tx, policy: policy)
            tx.claims.signUpChosen = true
            return try await runner.run(tx, from: journey.index(of: .signUp) ?? 0, journey, policy: policy, visit)
        case ("signup", "POST") where signsUp:
            return try await goOn(SignUpStep(self).resume(form, tx, policy: policy), after: .signUp)
        case ("profile", "POST") where policy.kind == .editProfile:
            return try await goOn(ProfileEditStep(self).resume(form, tx, policy: policy), after: .profileEdit)
        case ("reset", "POST") where policy.kind == .resetPassword, ("resend", "GET") where policy.kind == .resetPassword:
            let email = name == "resend" ? (tx.resetEmail ?? "") : (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
            return try await PasswordResetStep(self).requestCode(email: email, &tx, policy: policy)
        case ("resetverify", "POST") where policy.kind == .resetPassword:
            return try await goOn(PasswordResetStep(self).resume(form, tx, policy: policy), after: .passwordReset)
        default:
            break
        }
        throw PageError(code: nil, message: "There is no '\(name)' step (\(req.method)) in the user flow '\(policy.id)'.", status: 404)
    }
}
