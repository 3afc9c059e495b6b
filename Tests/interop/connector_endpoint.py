"""The developer's endpoint for the tenant's API connector tests (Python's standard library, and cryptography for its
certificates).

Usage: connector_endpoint.py DIR
Writes a CA, a server certificate for 127.0.0.1 and a client certificate (PEM) into DIR, then listens on 127.0.0.1 twice:
plain HTTP (where Basic and Bearer credentials are checked) and HTTPS that requires a client certificate of the CA.
Prints one JSON line {"http", "https", "ca", "clientCert", "clientKey"} once both listen.
  POST /_answers  [{"status", "body" (JSON, or a string sent as is), "delayMs", "contentType"}]: queued answers, one
                  per call (an empty queue answers {"version": "1.0.0", "action": "Continue"})
  GET /_requests  JSON: every call received (method, path, authorization, body, client certificate's CN)
  GET /layout/... a page layout template that names its own path (and, under /layout/cors/, allows the request's Origin)
  POST /extension/...?aud=APPID  an authentication extension's call: its bearer token is verified with PyJWT against the
                  keys of the discovery document of the token's own issuer (audience APPID, azp the authentication events app)
  POST or GET anything else: a connector call (a GET has no body)
"""
import datetime
import json
import os
import signal
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from quiet_handler import QuietHandler

BASIC = "Basic " + __import__("base64").b64encode(b"connector:s3cret-Passw0rd").decode()
BEARER = "Bearer static-connector-token"
EVENTS_APP = "99045fe1-7639-4a75-9d4a-577b6ca3810f"
answers = []
requests = []
lock = threading.Lock()


def certificates(directory):
    now = datetime.datetime.now(datetime.timezone.utc)

    def make(cn, issuer_key=None, issuer_name=None, ca=False, server=False):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        b = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name or name).public_key(key.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
             .not_valid_after(now + datetime.timedelta(days=30))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if server:
            b = b.add_extension(x509.SubjectAlternativeName([x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))]),
                                critical=False)
            b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        elif not ca:
            b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        cert = b.sign(issuer_key or key, hashes.SHA256())
        return key, cert, name

    ca_key, ca_cert, ca_name = make("connector-test-ca", ca=True)
    paths = {}
    for label, (key, cert) in {"ca": (ca_key, ca_cert),
                               "server": make("127.0.0.1", ca_key, ca_name, server=True)[:2],
                               "client": make("b2c-emulator-connector-client", ca_key, ca_name)[:2]}.items():
        paths[label] = os.path.join(directory, f"{label}.pem")
        paths[label + "Key"] = os.path.join(directory, f"{label}-key.pem")
        with open(paths[label], "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
        with open(paths[label + "Key"], "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                      serialization.NoEncryption()))
    return paths


jwks_clients = {}


def verify_callout_token(authorization, audience):
    """What an extension's own code checks: signature (the issuer's JWKS, fetched once per issuer as a real extension
    caches it), audience, azp, expiry."""
    import jwt
    try:
        token = (authorization or "").removeprefix("Bearer ")
        issuer = jwt.decode(token, options={"verify_signature": False})["iss"]
        if issuer not in jwks_clients:
            with urllib.request.urlopen(issuer.rstrip("/") + "/.well-known/openid-configuration", timeout=10) as r:
                jwks_clients[issuer] = jwt.PyJWKClient(json.load(r)["jwks_uri"])
        key = jwks_clients[issuer].get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=issuer)
        if claims.get("azp") != EVENTS_APP:
            return {"valid": False, "error": "azp is " + str(claims.get("azp"))}
        return {"valid": True, "iss": claims["iss"], "aud": claims["aud"], "azp": claims["azp"], "idtyp": claims.get("idtyp")}
    except Exception as e:  # the test reads why
        return {"valid": False, "error": repr(e)}


class Handler(QuietHandler):

    def do_GET(self):
        if self.path == "/_requests":
            # Tokens are verified after the answer went out (so that a loaded machine's verification never delays the
            # tenant): wait until every verification is done.
            for _ in range(200):
                with lock:
                    if not any(r["token"] == "pending" for r in requests):
                        return self.send(200, json.dumps(requests))
                time.sleep(0.05)
            with lock:
                return self.send(200, json.dumps(requests))
        if self.path.startswith("/layout/") and "missing" in self.path:
            return self.send(404, "{}")
        if self.path.startswith("/layout/"):
            page = ('<!DOCTYPE html><html lang="de"><head><title>Contoso layout</title>'
                    '<link rel="stylesheet" href="https://cdn.contoso.test/site.css">'
                    '<script src="https://cdn.contoso.test/app.js"></script></head><body>'
                    f'<header id="brand" data-path="{self.path}">Contoso</header><iframe src="https://ads.test"></iframe>'
                    '<div id="api" role="main" class="contoso-panel"></div></body></html>').encode()
            cors = self.path.startswith("/layout/cors/") and self.headers.get("Origin")
            allow = [("Access-Control-Allow-Origin", self.headers["Origin"])] if cors else []
            return self.send(200, page, "text/html; charset=utf-8", allow)
        self.call(b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/_answers":
            with lock:
                answers.extend(json.loads(body))
            return self.send(200, "{}")
        self.call(body)

    def call(self, body):
        cn = None
        if isinstance(self.connection, ssl.SSLSocket):
            peer = self.connection.getpeercert()
            cn = dict(x[0] for x in peer.get("subject", ())).get("commonName") if peer else None
        authorization = self.headers.get("Authorization")
        url = urllib.parse.urlsplit(self.path)
        extension = url.path.startswith("/extension/")
        record = {"method": self.command, "path": self.path, "authorization": authorization,
                  "contentType": self.headers.get("Content-Type"),
                  "body": json.loads(body or b"null"), "clientCN": cn, "token": "pending" if extension else None,
                  "apiKey": self.headers.get("x-functions-key")}
        with lock:
            requests.append(record)
            answer = answers.pop(0) if answers else {"status": 200, "body": {"version": "1.0.0", "action": "Continue"}}
        try:
            self.answer(answer, authorization)
        finally:
            if extension:
                record["token"] = verify_callout_token(authorization, dict(urllib.parse.parse_qsl(url.query)).get("aud"))

    def answer(self, answer, authorization):
        if self.path.startswith("/basic/") and authorization != BASIC:
            return self.send(401, json.dumps({"error": "wrong Basic credentials"}))
        if self.path.startswith("/bearer/") and authorization != BEARER:
            return self.send(401, json.dumps({"error": "wrong bearer token"}))
        time.sleep(answer.get("delayMs", 0) / 1000)
        payload = answer.get("body", "")
        self.send(answer.get("status", 200), payload if isinstance(payload, str) else json.dumps(payload),
                  answer.get("contentType", "application/json"))


def main():
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a test runner may hand it down ignored
    paths = certificates(sys.argv[1])
    plain = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    secure = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(paths["server"], paths["serverKey"])
    context.load_verify_locations(paths["ca"])
    context.verify_mode = ssl.CERT_REQUIRED
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    for server in (plain, secure):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"http": f"http://127.0.0.1:{plain.server_port}", "https": f"https://127.0.0.1:{secure.server_port}",
                      "ca": paths["ca"], "clientCert": paths["client"], "clientKey": paths["clientKey"]}), flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
