/// The tenant's SAML messages to a provider, templated like its pages so that their values go through the same escaper
/// (`HTML.escape`'s entities are XML's).
enum SAMLMessagesTemplates {
    static let samlMessages = [
        "saml-metadata": """
        <?xml version="1.0" encoding="utf-8"?>
        <EntityDescriptor xmlns="\(SAMLRelyingParty.metadataNS)" entityID="{{entityID}}">
          <SPSSODescriptor AuthnRequestsSigned="{{signed}}" WantAssertionsSigned="true" \
        protocolSupportEnumeration="\(SAMLRelyingParty.protocolNS)">
        {{#certificate}}
            <KeyDescriptor use="signing"><KeyInfo xmlns="\(XMLSignature.dsig)"><X509Data><X509Certificate>{{certificate}}</X509Certificate>\
        </X509Data></KeyInfo></KeyDescriptor>
        {{/certificate}}
            <NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified</NameIDFormat>
            <NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat>
            <NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</NameIDFormat>
            <AssertionConsumerService Binding="\(SAMLRelyingParty.postBinding)" Location="{{assertionConsumer}}" index="0" \
        isDefault="true"/>
          </SPSSODescriptor>
        </EntityDescriptor>

        """,
        "saml-authnrequest": """
        <samlp:AuthnRequest xmlns:samlp="\(SAMLRelyingParty.protocolNS)" xmlns:saml="\(SAMLRelyingParty.assertionNS)" \
        ID="{{id}}" Version="2.0" IssueInstant="{{instant}}" Destination="{{destination}}" \
        AssertionConsumerServiceURL="{{assertionConsumer}}" ProtocolBinding="\(SAMLRelyingParty.postBinding)">\
        <saml:Issuer>{{entityID}}</saml:Issuer><samlp:NameIDPolicy AllowCreate="true"/></samlp:AuthnRequest>
        """,
    ]
}
