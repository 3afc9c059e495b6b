"""IdentityPython's OP (idpyoidc) as bench/peer-servers.sh's second peer: its token endpoint over TLS.

  peer_idpy.py DIR PORT

Builds an OpenID Connect provider with idpyoidc's own classes (RS256 with a 2048-bit key, JWT access tokens, its
session manager), registers one confidential client (`bench`) and one person, runs an authorization-code grant in
process to get that person a refresh token, writes the forms wrk will send (DIR/refresh.form: the refresh grant,
DIR/cc.form: client credentials), then serves POST /token with waitress behind TLS (a Python ssl socket) until killed.
DIR/ready holds the token endpoint's URL once it serves.
"""

import json
import os
import ssl
import subprocess
import sys
import urllib.parse

from idpyoidc.message.oidc import AuthorizationRequest
from idpyoidc.server import Server
from idpyoidc.server.authn_event import create_authn_event
from idpyoidc.server.configure import OPConfiguration
from idpyoidc.server.oauth2.token_helper.client_credentials import ClientCredentials
from idpyoidc.time_util import utc_time_sans_frac
from waitress.server import create_server



class KeptClientCredentials(ClientCredentials):
    """The client-credentials helper of idpyoidc 5.0.0 reads a client's existing session as a dict and fails (HTTP 500) on
    every request after the first; this one keeps each client's session id from its first request and mints from it,
    as the helper's own first request does."""

    sessions: dict = {}

    def process_request(self, req, **kwargs):
        context = self.endpoint.upstream_get("context")
        manager = context.session_manager
        client_id = req["client_id"]
        if not req.get("authenticated", False):
            return self.error_cls(error="invalid_client", error_description="Wrong client")
        if client_id not in self.sessions:
            self.sessions[client_id] = manager.add_grant(["client_credentials", client_id])
        info = manager.get_session_info(self.sessions[client_id])
        allowed = context.cdb[client_id].get("allowed_scopes", [])
        token = self._mint_token(
            token_class="access_token", grant=info["grant"], session_id=info["branch_id"], client_id=info["client_id"],
            based_on=None, scope=allowed, token_type="Bearer")
        answer = {"access_token": token.value, "token_type": token.token_class, "scope": allowed}
        if token.expires_at:
            answer["expires_in"] = token.expires_at - utc_time_sans_frac()
        return answer


directory, port = sys.argv[1], int(sys.argv[2])
issuer = f"https://127.0.0.1:{port}"
secret = "Bench-secret-2026"
os.chdir(directory)

conf = {
    "issuer": issuer,
    "httpc_params": {"verify": False},
    "keys": {
        "private_path": "private/jwks.json",
        "key_defs": [{"type": "RSA", "use": ["sig"], "size": 2048}],
        "uri_path": "jwks.json",
        "read_only": False,
    },
    "token_handler_args": {
        "jwks_def": {
            "private_path": "private/token_jwks.json",
            "read_only": False,
            "key_defs": [{"type": "oct", "bytes": 24, "use": ["enc"], "kid": "code"}],
        },
        "code": {"kwargs": {"lifetime": 600}},
        "token": {"class": "idpyoidc.server.token.jwt_token.JWTToken", "kwargs": {"lifetime": 3600, "alg": "RS256"}},
        "refresh": {"kwargs": {"lifetime": 86400}},
        "id_token": {"class": "idpyoidc.server.token.id_token.IDToken", "kwargs": {}},
    },
    "endpoint": {
        "provider_config": {
            "path": ".well-known/openid-configuration",
            "class": "idpyoidc.server.oidc.provider_config.ProviderConfiguration",
            "kwargs": {},
        },
        "authorization": {"path": "authorization", "class": "idpyoidc.server.oidc.authorization.Authorization", "kwargs": {}},
        "token": {
            "path": "token",
            "class": "idpyoidc.server.oidc.token.Token",
            "kwargs": {
                "client_authn_method": ["client_secret_post", "client_secret_basic"],
                # The OpenID Connect token endpoint's helpers, and OAuth 2.0's client-credentials helper beside them.
                "grant_types_helpers": {
                    "authorization_code": {"class": "idpyoidc.server.oidc.token_helper.access_token.AccessTokenHelper"},
                    "refresh_token": {"class": "idpyoidc.server.oidc.token_helper.refresh_token.RefreshTokenHelper"},
                    "client_credentials": {"class": KeptClientCredentials},
                },
            },
        },
    },
    "authentication": {
        "anon": {
            "acr": "urn:oasis:names:tc:SAML:2.0:ac:classes:InternetProtocolPassword",
            "class": "idpyoidc.server.user_authn.user.NoAuthn",
            "kwargs": {"user": "alice"},
        }
    },
    "userinfo": {"class": "idpyoidc.server.user_info.UserInfo", "kwargs": {"db": {"alice": {"sub": "alice", "name": "Alice"}}}},
    "authz": {
        "class": "idpyoidc.server.authz.AuthzHandling",
        "kwargs": {
            "grant_config": {
                "usage_rules": {
                    "authorization_code": {"supports_minting": ["access_token", "refresh_token", "id_token"], "max_usage": 1},
                    "access_token": {},
                    "refresh_token": {"supports_minting": ["access_token", "refresh_token", "id_token"], "expires_in": -1},
                },
                "expires_in": 43200,
            }
        },
    },
    "scopes_to_claims": {"openid": ["sub"], "demo.read": []},
}
server = Server(OPConfiguration(conf=conf, base_path=directory), cwd=directory)
context = server.context
context.cdb["bench"] = {
    "client_id": "bench",
    "client_secret": secret,
    "redirect_uris": [("https://localhost/cb", {})],
    "token_endpoint_auth_method": "client_secret_post",
    "response_types_supported": ["code"],
    "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
    "allowed_scopes": ["openid", "offline_access", "demo.read"],
}
token_endpoint = server.get_endpoint("token")

# A person's refresh token: a session as the authorization endpoint would make it, its code redeemed in process.
request = AuthorizationRequest(
    client_id="bench", redirect_uri="https://localhost/cb", scope=["openid", "offline_access", "demo.read"], state="s",
    response_type="code", nonce="n")
manager = context.session_manager
session_id = manager.create_session(create_authn_event("alice"), request, "alice", client_id="bench")
grant = manager[session_id]
code = grant.mint_token(
    session_id=session_id, context=context, token_class="authorization_code",
    token_handler=manager.token_handler["authorization_code"])


def answer(body: str):
    parsed = token_endpoint.parse_request(body, http_info={"headers": {}})
    if "error" in parsed:
        return 400, parsed.to_json()
    args = token_endpoint.process_request(parsed)
    if "error" in args:
        return 400, args.to_json() if hasattr(args, "to_json") else json.dumps(args)
    response = token_endpoint.do_response(**args)
    return 200, response["response"]


form = {"grant_type": "authorization_code", "code": code.value, "redirect_uri": "https://localhost/cb",
        "client_id": "bench", "client_secret": secret}
status, text = answer(urllib.parse.urlencode(form))
if status != 200:
    sys.exit(f"peer_idpy: the code was refused: {text}")
refresh_token = json.loads(text)["refresh_token"]
old = os.umask(0o077)
with open("refresh.form", "w") as f:
    f.write(urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": "bench",
                                    "client_secret": secret}))
with open("cc.form", "w") as f:
    f.write(urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": "bench", "client_secret": secret,
                                    "scope": "demo.read"}))
os.umask(old)


def app(environ, start_response):
    if environ["REQUEST_METHOD"] != "POST" or environ["PATH_INFO"] != "/token":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]
    length = int(environ.get("CONTENT_LENGTH") or 0)
    status, text = answer(environ["wsgi.input"].read(length).decode())
    start_response("200 OK" if status == 200 else "400 Bad Request",
                   [("Content-Type", "application/json"), ("Cache-Control", "no-store")])
    return [text.encode()]


# TLS: a self-signed certificate for 127.0.0.1 (the load tool does not verify it; curl is told -k).
subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "tls.key", "-out", "tls.pem", "-days", "2",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain("tls.pem", "tls.key")
listener = tls.wrap_socket(__import__("socket").create_server(("127.0.0.1", port)), server_side=True)
server_http = create_server(app, sockets=[listener], threads=4, ident=None)
with open("ready", "w") as f:
    f.write(f"{issuer}/token\n")
server_http.run()
