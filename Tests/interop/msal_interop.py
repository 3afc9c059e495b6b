"""Drives the real Microsoft `msal` library against a running b2c emulator (TLS).

Usage: python msal_interop.py BASE_URL CA_FILE
Exercises: auth code + PKCE (the emulator's pages driven over HTTP), ROPC, refresh (silent, forced),
and checks MSAL's home account id `<oid>-<policy lower>.<tenant guid>`. Every id and access token is also verified
with PyJWT (a verifier no one here wrote) against the policy's own JWKS. Prints one JSON line; exit 0 on success.
"""
import html.parser
import json
import os
import sys
import urllib.parse

import jwt
import msal
import requests

BASE, CA = sys.argv[1], sys.argv[2]
os.environ["REQUESTS_CA_BUNDLE"] = CA
os.environ["CURL_CA_BUNDLE"] = CA
TENANT = "contoso.onmicrosoft.com"
TENANT_ID = "8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f"
CLIENT_ID = "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e"
SCOPE = "https://contoso.onmicrosoft.com/helloapi/demo.read"
ALICE = ("alice@contoso.com", "Alice-dev-2026!", "0a11ce00-5eed-4a11-8000-00000000a11c")
BOB = ("bob@contoso.com", "Bob-dev-2026!", "0b0b0000-5eed-4b0b-8000-000000000b0b")


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


def verify_with_pyjwt(token, policy, audience):
    """PyJWT checks signature (RS256, the key named by kid in the policy's JWKS), iss, aud and exp."""
    discovery = requests.get(f"{BASE}/{TENANT}/{policy}/v2.0/.well-known/openid-configuration", verify=CA).json()
    keys = jwt.PyJWKSet.from_dict(requests.get(discovery["jwks_uri"], verify=CA).json())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=discovery["issuer"])
    check(claims.get("tfp", claims.get("acr", "")).lower() == policy.lower(), f"policy claim of {claims}")
    return claims


def app_for(policy):
    return msal.PublicClientApplication(CLIENT_ID, authority=f"{BASE}/{TENANT}/{policy}", verify=CA)


def auth_code(app, user, password):
    flow = app.initiate_auth_code_flow([SCOPE], redirect_uri="http://localhost:8400", response_mode="query")
    session = requests.Session()
    session.verify = CA
    page = session.get(flow["auth_uri"], allow_redirects=False)
    check(page.status_code == 200, f"authorize page status {page.status_code}: {page.text[:300]}")
    parser = FormParser()
    parser.feed(page.text)
    form = next(f for f in parser.forms if f["id"] == "localAccountForm")
    fields = dict(form["fields"], logonIdentifier=user, password=password)
    reply = session.post(urllib.parse.urljoin(page.url, form["action"]), data=fields, allow_redirects=False)
    check(reply.status_code == 302, f"sign-in post status {reply.status_code}: {reply.text[:300]}")
    location = reply.headers["Location"]
    check(location.startswith("http://localhost:8400"), f"redirect to {location}")
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(location).query))
    result = app.acquire_token_by_auth_code_flow(flow, params)
    check("access_token" in result, f"auth code redemption failed: {result}")
    return result


out = {}
# 1. Authorization code + PKCE through the sign-in page.
susi = app_for("B2C_1_susi")
r = auth_code(susi, ALICE[0], ALICE[1])
accounts = susi.get_accounts()
check(len(accounts) == 1, f"accounts after auth code: {accounts}")
expected = f"{ALICE[2]}-b2c_1_susi.{TENANT_ID}"
check(accounts[0]["home_account_id"] == expected, f"home_account_id {accounts[0]['home_account_id']} != {expected}")
check(r["id_token_claims"]["tfp"] == "B2C_1_susi", "tfp claim")
check(r["id_token_claims"]["emails"] == [ALICE[0]], "emails claim")
out["authCodeAccount"] = accounts[0]["home_account_id"]
API_APP_ID = "5a7b9c1d-3e2f-4a6b-8c0d-1e2f3a4b5c6d"
verify_with_pyjwt(r["id_token"], "B2C_1_susi", CLIENT_ID)
check(verify_with_pyjwt(r["access_token"], "B2C_1_susi", API_APP_ID)["scp"] == "demo.read", "access token scp")

# The access token works at the sample API.
hello = requests.get(f"{BASE}/hello", headers={"Authorization": "Bearer " + r["access_token"]}, verify=CA)
check(hello.status_code == 200 and hello.json()["name"] == "Alice Example", f"/hello: {hello.status_code} {hello.text}")

# 2. Refresh: silent with force_refresh goes to the token endpoint with the refresh token.
silent = susi.acquire_token_silent([SCOPE], account=accounts[0], force_refresh=True)
check(silent and "access_token" in silent, f"silent refresh failed: {silent}")
check(silent["access_token"] != r["access_token"], "refresh returned the same access token")
verify_with_pyjwt(silent["access_token"], "B2C_1_susi", API_APP_ID)
out["refreshed"] = True

# 3. ROPC against the ROPC policy. msal first probes https://<host>/common/userrealm/<user> and falls back to
# plain ROPC on 404; it builds that URL without the port (it assumes 443), so we check the emulator's 404
# ourselves and tell msal the answer it would have cached.
realm = requests.get(f"{BASE}/common/userrealm/{BOB[0]}?api-version=1.0", headers={"Accept": "application/json"}, verify=CA)
check(realm.status_code == 404, f"userrealm probe answered {realm.status_code}")
msal.authority.Authority._domains_without_user_realm_discovery.add(urllib.parse.urlparse(BASE).hostname)
ropc = app_for("B2C_1_ROPC_Auth")
rr = ropc.acquire_token_by_username_password(BOB[0], BOB[1], scopes=[SCOPE])
check("access_token" in rr, f"ROPC failed: {rr}")
ropc_accounts = ropc.get_accounts()
expected_bob = f"{BOB[2]}-b2c_1_ropc_auth.{TENANT_ID}"
check(ropc_accounts[0]["home_account_id"] == expected_bob, f"ROPC home_account_id {ropc_accounts[0]['home_account_id']}")
verify_with_pyjwt(rr["id_token"], "B2C_1_ROPC_Auth", CLIENT_ID)
verify_with_pyjwt(rr["access_token"], "B2C_1_ROPC_Auth", API_APP_ID)
out["pyjwtVerified"] = 5
out["ropcAccount"] = ropc_accounts[0]["home_account_id"]

# A wrong password is B2C's AADB2C90225.
bad = ropc.acquire_token_by_username_password(BOB[0], "wrong-password", scopes=[SCOPE])
check(bad.get("error") == "access_denied" and "AADB2C90225" in bad.get("error_description", ""), f"bad ROPC: {bad}")

# 4. A refresh token of one policy is refused by another (AADB2C90088).
rt = next(iter(ropc.token_cache._cache["RefreshToken"].values()))["secret"]
other = susi.acquire_token_by_refresh_token(rt, scopes=[SCOPE])
check(other.get("error") == "invalid_grant" and "AADB2C90088" in other.get("error_description", ""), f"cross-policy refresh: {other}")
out["crossPolicyRefresh"] = "AADB2C90088"
print(json.dumps(out))
