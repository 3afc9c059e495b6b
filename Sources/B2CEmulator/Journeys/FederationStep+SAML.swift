import B2CProtocol
import Foundation
import Hummingbird

/// Sign-in with a SAML 2.0 identity provider (reference: b2c-journeys.md §2.3): the provider's button (or `domain_hint`)
/// sends an `AuthnRequest` with the transaction as `RelayState`; the answer comes back by HTTP-POST to
/// `/{tenant}/{policy}/samlp/sso/assertionconsumer`, and the tenant publishes what an IdP administrator imports at
/// `/{tenant}/{policy}/samlp/metadata?idptp={provider id}`.
extension FederationStep {
    func federate(
        _ tx: AuthorizeTransaction, to provider: EmulatorSeed.SAMLProvider, origin: String, policy: EmulatorSeed.Policy
    ) async throws -> Response {
        var tx = tx
        let metadata: SAMLRelyingParty.IdPMetadata
        do { metadata = try await SAMLRelyingParty.metadata(provider) } catch let e as FederationFailure {
            throw PageError(code: "AADB2C90273", message: "An invalid response was received : '\(e.reason)'")
        }
        let pending = SAMLPending(providerID: provider.id, requestID: "_" + Random.token(bytes: 16), metadata: metadata)
        tx.saml = pending
        tx.federatingWith = provider.id
        try store.saveTransaction(tx, now: clock.now())
        store.journeys.note(tx.id, .decision, "sent to an identity provider", ["provider": .string(provider.id), "protocol": "saml"])
        store.requests.log(
            .init(at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil, outcome: "sent"))
        let sp = serviceProvider(origin: origin, tenantSegment: tx.tenantSegment, policy: policy)
        let request = SAMLRelyingParty.authnRequest(
            id: pending.requestID, sp: sp, destination: metadata.singleSignOnURL, at: clock.date)
        guard metadata.usesPostBinding else {
            // Signed when the profile or the provider's metadata asks (B2C's rule), with the custom policies' key.
            let signs = provider.signsRequests || metadata.wantsSignedRequests == true
            let query = try SAMLRelyingParty.redirectQuery(
                request, relayState: tx.id, signedWith: signs ? provider.requestSignature : nil, key: try issuer.keys.current(.custom).key)
            return .redirect(metadata.singleSignOnURL + (metadata.singleSignOnURL.contains("?") ? "&" : "?") + query)
        }
        return autoPost(
            to: metadata.singleSignOnURL, [("SAMLRequest", Data(request.utf8).base64EncodedString()), ("RelayState", tx.id)])
    }

    /// `POST /{tenant}/{policy}/samlp/sso/assertionconsumer`: the provider's `SAMLResponse` for the transaction named by
    /// `RelayState`.
    func samlAnswered(_ req: Request, _ context: EmulatorRequestContext, policy: EmulatorSeed.Policy) async throws -> Response {
        var request = req
        let form = try await request.queryAndForm()
        guard req.method == .post, let relay = form["RelayState"], var tx = try store.transaction(id: relay, now: clock.now()),
            tx.policy.lowercased() == policy.lowercasedID, let pending = tx.saml, tx.federatingWith == pending.providerID,
            let provider = samlProviders(policy).first(where: { $0.id == pending.providerID })
        else {
            throw PageError(
                code: "AADB2C90208",
                message: "This sign-in page has expired or was already used. Go back to your application and start again.")
        }
        let customPolicy = tx.federatingCustomPolicy
        tx.saml = nil
        tx.federatingWith = nil
        try store.saveTransaction(tx, now: clock.now())  // one answer per request: a replayed one finds nothing under way
        store.journeys.note(
            tx.id, .step, "identity provider answered", ["expected": .string(pending.providerID), "answer": "SAMLResponse"])
        let sp = serviceProvider(origin: context.origin, tenantSegment: tx.tenantSegment, policy: policy)
        let identity: FederatedIdentity
        do {
            let answer = try SAMLRelyingParty.identity(
                samlResponse: form["SAMLResponse"] ?? "", provider: provider, pending: pending, sp: sp, now: clock.now())
            // An assertion is taken once, whichever sign-in it is carried into, until it expires.
            guard
                store.firstUse(ofAssertion: "\(pending.metadata.entityID) \(answer.assertionID)", until: answer.expiresAt, now: clock.now())
            else { throw FederationFailure(reason: "this assertion of \(provider.name) was already used") }
            identity = answer.identity
        } catch let no as SAMLRelyingParty.StatusFailure {
            try store.deleteTransaction(id: tx.id)
            logIdP(provider, tx, outcome: "refused")
            return redirectError(
                tx.reply,
                OAuthFailure(
                    error: "access_denied", code: "AADB2C90273",
                    message: "An invalid response was received : 'Error: \(no.status),Error Description: \(no.message)'"))
        } catch let e as FederationFailure {
            logIdP(provider, tx, outcome: "invalid")
            throw PageError(code: "AADB2C90273", message: "An invalid response was received : '\(e.reason)'")
        }
        logIdP(provider, tx, outcome: "ok")
        if let customPolicy {
            let outcome = try await CustomPolicyStep(parts: parts).federated(identity, tx, state: customPolicy, policy: policy)
            return try await JourneyRunner(self).proceed(outcome, after: .customPolicy, policy: policy, Visit(req, context))
        }
        let outcome = try federated(identity, tx, policy: policy)
        return try await JourneyRunner(self).proceed(outcome, after: .federation, policy: policy, Visit(req, context))
    }

    /// `GET /{tenant}/{policy}/samlp/metadata?idptp={provider id}`: the service provider as the IdP is to know it.
    func samlMetadata(
        _ req: Request, _ context: EmulatorRequestContext, authority: AuthorityRef, policy: EmulatorSeed.Policy
    ) throws
        -> Response
    {
        let id = (try? req.queryParameters())?["idptp"] ?? ""
        guard samlProviders(policy).contains(where: { $0.id == id }) else {
            let known = samlProviders(policy).map(\.id).joined(separator: ", ")
            return .text(
                "The policy \(policy.id) has no SAML identity provider '\(id)'"
                    + (known.isEmpty ? "." : "; name one of \(known) in ?idptp=.") + "\n",
                status: 404)
        }
        let sp = serviceProvider(origin: context.origin, tenantSegment: authority.tenantSegment, policy: policy)
        let signs = samlProviders(policy).first { $0.id == id }?.signsRequests == true
        let certificate = signs ? try SigningKeys.certificate(of: try issuer.keys.current(.custom)).base64EncodedString() : nil
        return Response(
            status: .ok, headers: [.contentType: "application/samlmetadata+xml; charset=utf-8"],
            body: .init(byteBuffer: .init(string: SAMLRelyingParty.serviceProviderMetadata(sp, signingCertificate: certificate))))
    }

    /// A user flow's SAML providers, or a custom policy's `SAML2` profiles.
    func samlProviders(_ policy: EmulatorSeed.Policy) -> [EmulatorSeed.SAMLProvider] {
        policy.runsCustomPolicy ? parts.customPolicies.samlProviders(policy.id) : policy.samlProviders
    }

    func serviceProvider(origin: String, tenantSegment: String, policy: EmulatorSeed.Policy) -> SAMLRelyingParty.ServiceProvider {
        .init(origin: origin, tenantName: tenantName, tenantSegment: tenantSegment, policy: policy)
    }

    private func logIdP(_ provider: EmulatorSeed.SAMLProvider, _ tx: AuthorizeTransaction, outcome: String) {
        store.requests.log(
            .init(at: clock.now(), endpoint: "idp", grantType: provider.id, policy: tx.policy, clientId: "", oid: nil, outcome: outcome))
    }

    /// A page that posts its fields at once (the HTTP-POST binding), with a button for a browser without JavaScript.
    private func autoPost(to url: String, _ fields: [(String, String)]) -> Response {
        HTML.autoPostPage(to: url, fields, goingBackTo: "on to the identity provider")
    }
}
