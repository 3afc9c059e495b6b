"""What the interoperability scripts share: the default tenant's facts, the sign-in page driver and PyJWT checks."""
import html.parser
import os
import sys
import urllib.parse

import jwt
import requests

BASE, CA = sys.argv[1], sys.argv[2]
os.environ["REQUESTS_CA_BUNDLE"] = CA
os.environ["CURL_CA_BUNDLE"] = CA
TENANT = "contoso.onmicrosoft.com"
TENANT_ID = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"
CLIENT_ID = "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e"
API_APP_ID = "5a7b9c1d-3e2f-4a6b-8c0d-1e2f3a4b5c6d"
SCOPE = "https://contoso.onmicrosoft.com/helloapi/demo.read"
API_DEFAULT = "https://contoso.onmicrosoft.com/helloapi/.default"
ALICE = ("alice@contoso.com", "Alice-dev-2026!", "0a11ce00-5eed-4a11-8000-00000000a11c")
BOB = ("bob@contoso.com", "Bob-dev-2026!", "0b0b0000-5eed-4b0b-8000-000000000b0b")
WEB_APP = ("6b1e0c2a-7d4f-4e3b-9a8c-2f5d1e0b7c9a", "WebApp-dev-secret-2026", "http://localhost/signin-oidc")
DAEMON = ("7c2f1d3b-8e5a-4f4c-8b9d-3a6e2f1c8d0b", "Daemon-dev-secret-2026", "7c2f1d3b-5e1f-4c2a-9b3d-000000000003")


class FormParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"id": a.get("id"), "action": a.get("action"), "fields": {}})
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1]["fields"][a["name"]] = a.get("value") or ""


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")


def sign_in(auth_uri, user, password, redirect_uri):
    """Fills the local-account form of the page at auth_uri; returns the redirect's query or fragment as a dict."""
    session = requests.Session()
    session.verify = CA
    page = session.get(auth_uri, allow_redirects=False)
    check(page.status_code == 200, f"authorize page status {page.status_code}: {page.text[:300]}")
    parser = FormParser()
    parser.feed(page.text)
    form = next(f for f in parser.forms if f["id"] == "localAccountForm")
    fields = dict(form["fields"], logonIdentifier=user, password=password)
    reply = session.post(urllib.parse.urljoin(page.url, form["action"]), data=fields, allow_redirects=False)
    check(reply.status_code == 302, f"sign-in post status {reply.status_code}: {reply.text[:300]}")
    location = reply.headers["Location"]
    check(location.startswith(redirect_uri), f"redirect to {location}")
    parts = urllib.parse.urlparse(location)
    return dict(urllib.parse.parse_qsl(parts.fragment or parts.query))


def discovery(policy):
    return requests.get(f"{BASE}/{TENANT}/{policy}/v2.0/.well-known/openid-configuration", verify=CA).json()


def verify_with_pyjwt(token, policy, audience, policy_claim=True):
    """PyJWT checks signature (RS256, the key named by kid in the policy's JWKS), iss, aud and exp."""
    config = discovery(policy)
    keys = jwt.PyJWKSet.from_dict(requests.get(config["jwks_uri"], verify=CA).json())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=config["issuer"])
    if policy_claim:
        check(claims.get("tfp", claims.get("acr", "")).lower() == policy.lower(), f"policy claim of {claims}")
    return claims


def scripted_browser(agent, email, password):
    """Makes the scripted agent at `agent` Python's `$BROWSER` for `email`: `webbrowser` runs `$BROWSER` as one program and
    waits for it, as a browser's launcher returns at once; a small launcher starts the agent in the background (its output
    kept in a log for a failure), so that msal's loopback listener can take its answer. Returns (read_log, clean_up)."""
    import shlex
    import tempfile

    log = tempfile.NamedTemporaryFile(prefix="b2c-agent-", suffix=".log", delete=False).name
    launcher = tempfile.NamedTemporaryFile("w", prefix="b2c-browser-", suffix=".sh", delete=False)
    launcher.write(f"#!/bin/sh\n{shlex.quote(agent)} \"$1\" >>{shlex.quote(log)} 2>&1 &\n")
    launcher.close()
    os.chmod(launcher.name, 0o700)
    os.environ.update({"BROWSER": launcher.name, "B2C_AGENT_EMAIL": email, "B2C_AGENT_PASSWORD": password, "B2C_AGENT_CA": CA})

    def read_log():
        with open(log) as f:
            return f.read()

    def clean_up():
        os.unlink(launcher.name)
        os.unlink(log)

    return read_log, clean_up
