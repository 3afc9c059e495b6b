"""Drives the real Microsoft `msal` library against a running b2c emulator (TLS).

Usage: python msal_interop.py BASE_URL CA_FILE
Exercises: auth code + PKCE (the emulator's pages driven over HTTP), ROPC, refresh (silent, forced),
and checks MSAL's home account id `<oid>-<policy lower>.<tenant guid>`. Every id and access token is also verified
with PyJWT (a verifier no one here wrote) against the policy's own JWKS. Prints one JSON line; exit 0 on success.
"""
import json
import urllib.parse

import msal
import requests

from b2c_test_tenant import (ALICE, API_APP_ID, BASE, BOB, CA, CLIENT_ID, SCOPE, TENANT, TENANT_ID, check, sign_in,
                             verify_with_pyjwt)


def app_for(policy):
    return msal.PublicClientApplication(CLIENT_ID, authority=f"{BASE}/{TENANT}/{policy}", verify=CA)


def auth_code(app, user, password):
    flow = app.initiate_auth_code_flow([SCOPE], redirect_uri="http://localhost:8400", response_mode="query")
    params = sign_in(flow["auth_uri"], user, password, "http://localhost:8400")
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
