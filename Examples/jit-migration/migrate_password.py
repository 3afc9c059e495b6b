"""A just-in-time password migration function for Entra External ID's OnPasswordSubmit custom authentication extension,
runnable against the local tenant (docs/migration.md).

When a person still marked for migration signs in to the new (External ID) tenant with a password it does not know, the
tenant POSTs the event here: a bearer token of its own issuer, and the typed password inside `encryptedPasswordContext`,
a JWE encrypted to this function's certificate. The function verifies the token against the keys of the one tenant it
was told about (never against an issuer the token names), decrypts the password, checks it against the legacy Azure AD
B2C tenant by its ROPC user flow, and answers one action with the request's nonce: MigratePassword (the legacy tenant
took the password), Retry (it did not), Block (the legacy tenant could not say).

    python3 migrate_password.py --keys DIR --tenant https://contoso.ciamlogin.com/TENANT_ID --app-id EXTENSION_APP_ID \\
        --legacy https://legacy.example/contoso.onmicrosoft.com/B2C_1_ROPC_Auth --legacy-client CLIENT_ID \\
        [--tenant-ca CA.pem] [--legacy-ca CA.pem] [--port 0]

On start it makes DIR/cert.pem (give it to the tenant as the extension's encryptionCertificate) and DIR/key.pem (0600,
never leaves the machine) unless they exist, then prints one JSON line: {"url", "certificate"}.
Needs: joserfc (JWE), PyJWT[crypto] (the bearer token), requests, cryptography.
"""
import argparse
import base64
import datetime
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from joserfc import jwe
from joserfc.jwk import RSAKey

EVENTS_APP = "99045fe1-7639-4a75-9d4a-577b6ca3810f"  # "Azure AD authentication events": the token's azp
ACTION = "microsoft.graph.passwordSubmit."


def key_pair(directory):
    """The function's RSA key and self-signed certificate (CN=JitMigration), made once, as Microsoft's guide makes them."""
    key_file, cert_file = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
    if not os.path.exists(key_file):
        os.makedirs(directory, mode=0o700, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "JitMigration")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=365)).sign(key, hashes.SHA256()))
        descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
        with open(cert_file, "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_file, "rb") as f:
        return RSAKey.import_key(f.read()), cert_file


class Migration:
    def __init__(self, key, legacy, legacy_client, legacy_ca, app_id, tenant, tenant_ca=None):
        self.key, self.legacy, self.legacy_client, self.legacy_ca, self.app_id = key, legacy, legacy_client, legacy_ca, app_id
        self.tenant, self.tenant_ca = tenant, tenant_ca
        self.issuer, self.keys = None, {}

    def signing_key(self, kid):
        """The new tenant's issuer and signing keys, read from its discovery document on first use (the tenant may start
        after the function) and again for a key id not seen yet (a rotation). Only this tenant's keys are ever used: a token
        naming another issuer is refused, never looked up, so nobody else's token makes this function a password oracle."""
        if kid not in self.keys:
            verify = self.tenant_ca or True
            config = requests.get(self.tenant.rstrip("/") + "/v2.0/.well-known/openid-configuration", verify=verify,
                                  timeout=5).json()
            jwks = requests.get(config["jwks_uri"], verify=verify, timeout=5).json()
            self.issuer, self.keys = config["issuer"], {k["kid"]: jwt.PyJWK(k) for k in jwks["keys"] if "kid" in k}
        return self.keys[kid]

    def caller_is_the_tenant(self, authorization):
        """The bearer token: signed by the configured tenant, issued by it, for this function's app, from the events app."""
        if not authorization.startswith("Bearer "):
            return False
        token = authorization[len("Bearer "):]
        try:
            key = self.signing_key(jwt.get_unverified_header(token)["kid"])
            claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=self.app_id, issuer=self.issuer)
            return claims.get("azp") == EVENTS_APP
        except (jwt.PyJWTError, requests.RequestException, KeyError, ValueError):
            return False

    def password_context(self, event):
        """user-password, username and nonce: the JWE's plaintext is an unsecured JWT of them."""
        sealed = event["data"]["encryptedPasswordContext"]
        plaintext = jwe.decrypt_compact(sealed, self.key, algorithms=["RSA-OAEP-256", "RSA-OAEP", "A256GCM"]).plaintext
        claims = plaintext.decode().split(".")[1]
        return json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))

    def legacy_verdict(self, username, password):
        """The legacy B2C tenant's ROPC user flow: tokens mean the password is right."""
        try:
            answer = requests.post(
                self.legacy + "/oauth2/v2.0/token",
                data={"grant_type": "password", "client_id": self.legacy_client, "username": username, "password": password,
                      "scope": "openid " + self.legacy_client, "response_type": "id_token"},
                verify=self.legacy_ca or True, timeout=5)
        except requests.RequestException:
            return "Block"
        if answer.status_code == 200 and "id_token" in answer.json():
            return "MigratePassword"
        return "Retry" if answer.status_code == 400 else "Block"

    def answer(self, event):
        context = self.password_context(event)
        action = {"@odata.type": ACTION + self.legacy_verdict(context["username"], context["user-password"])}
        if action["@odata.type"].endswith("Block"):
            action.update(title="Sign-in blocked", message="Your old account could not be checked. Try again later.")
        return {"data": {"@odata.type": "microsoft.graph.onPasswordSubmitResponseData", "actions": [action],
                         "nonce": context["nonce"]}}


def handler_for(migration):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass  # the request carries a password, even encrypted: nothing is logged

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if not migration.caller_is_the_tenant(self.headers.get("Authorization", "")):
                return self.reply(401, {"error": "the caller is not the tenant"})
            try:
                return self.reply(200, migration.answer(json.loads(body)))
            except (ValueError, KeyError, IndexError) as e:
                return self.reply(400, {"error": f"the event could not be read: {type(e).__name__}"})

    return Handler


def main(argv):
    p = argparse.ArgumentParser(description="OnPasswordSubmit: just-in-time password migration from Azure AD B2C.")
    p.add_argument("--keys", required=True, help="folder of key.pem and cert.pem (made when missing)")
    p.add_argument("--tenant", required=True,
                   help="the new tenant's authority, https://host/<tenant id or domain>: only its tokens may call")
    p.add_argument("--tenant-ca", help="a CA file for the new tenant's certificate")
    p.add_argument("--legacy", required=True, help="the legacy tenant's ROPC user flow: https://host/<tenant>/<policy>")
    p.add_argument("--legacy-client", required=True, help="the client id the ROPC user flow serves")
    p.add_argument("--legacy-ca", help="a CA file for the legacy tenant's certificate")
    p.add_argument("--app-id", required=True, help="the extension's app id: the callout token's audience")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args(argv)
    key, certificate = key_pair(args.keys)
    migration = Migration(key, args.legacy.rstrip("/"), args.legacy_client, args.legacy_ca, args.app_id, args.tenant,
                          args.tenant_ca)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_for(migration))
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_port}/", "certificate": certificate}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
