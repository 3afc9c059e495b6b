"""A SAML 2.0 identity provider for the tenant's SAML federation tests, signing with signxml (lxml + cryptography).

Usage: saml_idp.py
Prints one JSON line {"base": URL, "entityID": ...} once it listens on 127.0.0.1, then serves until killed:
  GET /metadata                 the IdP's metadata (entityID, HTTP-Redirect SSO service, its signing certificate)
  GET /mode?name=M&email=E...   how the next answers are made (see ANSWERS), and for whom
  GET /sso?SAMLRequest&RelayState  reads the tenant's AuthnRequest (DEFLATE + base64; checked), answers by an
                                auto-posting form to the request's AssertionConsumerServiceURL
  GET /last                     JSON: what the last AuthnRequest said, and the last SAMLResponse sent
  GET /trust?cert=B64DER        the service provider's signing certificate (from its metadata): from then on an
                                AuthnRequest must carry a valid HTTP-Redirect signature (SigAlg, Signature) by it, or is
                                refused with 403, as an IdP that wants signed requests does
"""
import base64
import datetime
import json
import signal
import sys
import threading
import urllib.parse
import uuid
import zlib
from http.server import ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID
from lxml import etree
from quiet_handler import QuietHandler
from signxml import XMLSigner, methods

P = "urn:oasis:names:tc:SAML:2.0:protocol"
A = "urn:oasis:names:tc:SAML:2.0:assertion"
ANSWERS = {"sign-response", "sign-assertion", "sign-both", "unsigned", "tampered", "other-key", "wrong-audience", "expired",
           "denied", "wrapped", "sha1"}


def key_and_cert(cn):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem, cert.public_bytes(serialization.Encoding.PEM), cert.public_bytes(serialization.Encoding.DER)


KEY, CERT, CERT_DER = key_and_cert("saml-test-idp")
OTHER_KEY, OTHER_CERT, _ = key_and_cert("someone-else")
SIG_ALGS = {"http://www.w3.org/2000/09/xmldsig#rsa-sha1": hashes.SHA1(),
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256": hashes.SHA256(),
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384": hashes.SHA384(),
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512": hashes.SHA512()}
state = {"trusted": None, "mode": "sign-response", "email": "sam@saml.test", "given": "Sam", "surname": "Ml", "display": "Sam Ml",
         "subject": "sam-0001", "last": {}}
lock = threading.Lock()


def redirect_signature(raw_query, cert_der):
    """Whether an HTTP-Redirect query carries a valid signature by the certificate: SAML's binding signs the octets
    `SAMLRequest=…&RelayState=…&SigAlg=…` exactly as they arrived (still URL-encoded), with the algorithm SigAlg names."""
    parts = dict(p.split("=", 1) for p in raw_query.split("&") if "=" in p)
    if "SigAlg" not in parts or "Signature" not in parts:
        return False, "no SigAlg and Signature"
    algorithm = SIG_ALGS.get(urllib.parse.unquote_plus(parts["SigAlg"]))
    if algorithm is None:
        return False, "unknown SigAlg"
    signed = "&".join(f"{k}={parts[k]}" for k in ("SAMLRequest", "RelayState", "SigAlg") if k in parts)
    key = x509.load_der_x509_certificate(cert_der).public_key()
    try:
        key.verify(base64.b64decode(urllib.parse.unquote_plus(parts["Signature"])), signed.encode(), padding.PKCS1v15(), algorithm)
        return True, "valid"
    except Exception as e:  # InvalidSignature, a bad base64
        return False, f"invalid ({type(e).__name__})"


def instant(delta_seconds=0):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=delta_seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%07dZ" % (t.microsecond * 10)  # seven digits, as AD FS writes them


class LegacySigner(XMLSigner):
    """SHA-1, which signxml refuses by default and older IdPs still send (the tenant takes it, as B2C does)."""

    def check_deprecated_methods(self):
        pass


def sign(element, key=KEY, cert=CERT, algorithm="rsa-sha256", digest="sha256"):
    signer_type = LegacySigner if "sha1" in algorithm else XMLSigner
    signer = signer_type(method=methods.enveloped, signature_algorithm=algorithm, digest_algorithm=digest,
                         c14n_algorithm="http://www.w3.org/2001/10/xml-exc-c14n#")
    return signer.sign(element, key=key, cert=cert, reference_uri=element.get("ID"))


def assertion(entity_id, request, mode, s):
    aid = "_" + uuid.uuid4().hex
    audience = "https://elsewhere.example/sp" if mode == "wrong-audience" else request["issuer"]
    not_after = instant(-900) if mode == "expired" else instant(300)
    attrs = "".join(
        f'<saml:Attribute Name="{n}"><saml:AttributeValue>{v}</saml:AttributeValue></saml:Attribute>'
        for n, v in [("http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress", s["email"]),
                     ("http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname", s["given"]),
                     ("http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname", s["surname"]),
                     ("http://schemas.microsoft.com/identity/claims/displayname", s["display"])])
    xml = (
        f'<saml:Assertion xmlns:saml="{A}" ID="{aid}" Version="2.0" IssueInstant="{instant()}">'
        f'<saml:Issuer>{entity_id}</saml:Issuer>'
        f'<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">{s["subject"]}</saml:NameID>'
        f'<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">'
        f'<saml:SubjectConfirmationData InResponseTo="{request["id"]}" NotOnOrAfter="{not_after}" Recipient="{request["acs"]}"/>'
        f'</saml:SubjectConfirmation></saml:Subject>'
        f'<saml:Conditions NotBefore="{instant(-60)}" NotOnOrAfter="{not_after}">'
        f'<saml:AudienceRestriction><saml:Audience>{audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>'
        f'<saml:AuthnStatement AuthnInstant="{instant()}"><saml:AuthnContext><saml:AuthnContextClassRef>'
        f'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext>'
        f'</saml:AuthnStatement><saml:AttributeStatement>{attrs}</saml:AttributeStatement></saml:Assertion>')
    return etree.fromstring(xml)


def response(entity_id, request, s):
    mode = s["mode"]
    status = ('<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode '
              'Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"/></samlp:StatusCode>'
              '<samlp:StatusMessage>The user cancelled.</samlp:StatusMessage>'
              if mode == "denied" else '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/>')
    root = etree.fromstring(
        f'<samlp:Response xmlns:samlp="{P}" xmlns:saml="{A}" ID="_{uuid.uuid4().hex}" Version="2.0" '
        f'IssueInstant="{instant()}" Destination="{request["acs"]}" InResponseTo="{request["id"]}">'
        f'<saml:Issuer>{entity_id}</saml:Issuer><samlp:Status>{status}</samlp:Status></samlp:Response>')
    if mode == "denied":
        return root
    a = assertion(entity_id, request, mode, s)
    if mode in ("sign-assertion", "sign-both", "wrapped"):
        a = sign(a)
    if mode == "sha1":
        a = sign(a, algorithm="rsa-sha1", digest="sha1")
    if mode == "wrapped":
        # Signature wrapping: the signed assertion (for the real person) hidden in Extensions, an unsigned one for
        # someone else where a naive reader looks.
        evil = assertion(entity_id, request, mode, dict(s, email="mallory@evil.test", subject="mallory"))
        ext = etree.SubElement(root, f"{{{P}}}Extensions")
        ext.append(a)
        root.append(evil)
        return root
    root.append(a)
    if mode == "other-key":
        root = sign(root, key=OTHER_KEY, cert=OTHER_CERT)
    elif mode not in ("unsigned", "sign-assertion", "sha1"):
        root = sign(root)  # signed as it should be: what is wrong is inside (audience, time) or done after (tampered)
    if mode == "tampered":
        for v in root.iter(f"{{{A}}}AttributeValue"):
            if v.text == s["email"]:
                v.text = "mallory@evil.test"
    return root


class Handler(QuietHandler):
    default_type = "text/html; charset=utf-8"

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        base = f"http://127.0.0.1:{self.server.server_port}"
        entity_id = base + "/idp"
        if url.path == "/metadata":
            cert = base64.b64encode(CERT_DER).decode()
            self.send(200, f'<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
                           f'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="{entity_id}">'
                           f'<md:IDPSSODescriptor protocolSupportEnumeration="{P}"><md:KeyDescriptor use="signing">'
                           f'<ds:KeyInfo><ds:X509Data><ds:X509Certificate>\n{cert}\n</ds:X509Certificate></ds:X509Data>'
                           f'</ds:KeyInfo></md:KeyDescriptor><md:SingleSignOnService '
                           f'Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="{base}/sso"/>'
                           f'</md:IDPSSODescriptor></md:EntityDescriptor>', "application/samlmetadata+xml")
        elif url.path == "/mode":
            with lock:
                if q.get("name") not in ANSWERS:
                    return self.send(400, "unknown mode")
                state["mode"] = q["name"]
                for k in ("email", "given", "surname", "display", "subject"):
                    if k in q:
                        state[k] = q[k]
            self.send(200, "ok", "text/plain")
        elif url.path == "/trust":
            with lock:
                state["trusted"] = base64.b64decode(q["cert"])
            self.send(200, "ok", "text/plain")
        elif url.path == "/last":
            with lock:
                self.send(200, json.dumps(state["last"]), "application/json")
        elif url.path == "/sso":
            xml = zlib.decompress(base64.b64decode(q["SAMLRequest"]), -15)
            req = etree.fromstring(xml)
            assert req.tag == f"{{{P}}}AuthnRequest", req.tag
            request = {"id": req.get("ID"), "acs": req.get("AssertionConsumerServiceURL"), "destination": req.get("Destination"),
                       "issuer": req.findtext(f"{{{A}}}Issuer"), "binding": req.get("ProtocolBinding"),
                       "relayState": q.get("RelayState"), "sigAlg": q.get("SigAlg")}
            with lock:
                trusted = state["trusted"]
            if trusted is not None:
                valid, why = redirect_signature(url.query, trusted)
                request["signature"] = why
                if not valid:
                    with lock:
                        state["last"] = request
                    return self.send(403, f"the AuthnRequest's signature is {why}", "text/plain")
            with lock:
                answer = response(entity_id, request, dict(state))
                encoded = base64.b64encode(etree.tostring(answer)).decode()
                state["last"] = dict(request, samlResponse=encoded)
            relay = q.get("RelayState", "")
            # A typical IdP's answer page: the form's attributes in another order than the tenant's own pages.
            self.send(200, f'<html><body onload="document.forms[0].submit()"><form action="{request["acs"]}" method="post">'
                           f'<input type="hidden" name="SAMLResponse" value="{encoded}"/>'
                           f'<input type="hidden" name="RelayState" value="{relay}"/>'
                           f'<noscript><input type="submit" value="Continue"/></noscript></form></body></html>')
        else:
            self.send(404, "not found", "text/plain")


def main():
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a test runner may hand it down ignored
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_port}"
    print(json.dumps({"base": base, "entityID": base + "/idp"}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
