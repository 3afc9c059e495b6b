"""Drives msal's ConfidentialClientApplication (a web app with a secret and a daemon) against the TLS emulator.

Usage: python confidential_interop.py BASE_URL CA_FILE
Exercises: client credentials twice (the second from msal's cache), auth code with a secret, refresh with the
secret, a custom policy's tokens; PyJWT verifies every token against its own policy's JWKS, and a custom-policy
token against a user flow's JWKS must fail. Prints one JSON line; exit 0 on success.
"""
import json

import jwt
import msal
import requests

from b2c_test_tenant import (ALICE, API_APP_ID, API_DEFAULT, BASE, CA, DAEMON, SCOPE, TENANT, WEB_APP, check, sign_in,
                             verify_with_pyjwt)


def confidential(client, secret, policy):
    return msal.ConfidentialClientApplication(client, client_credential=secret, authority=f"{BASE}/{TENANT}/{policy}",
                                              verify=CA)


out = {}
verified = 0

# 1. A daemon: client credentials at a user flow's token endpoint; the second call is a cache hit.
daemon = confidential(DAEMON[0], DAEMON[1], "B2C_1_susi")
first = daemon.acquire_token_for_client(scopes=[API_DEFAULT])
check("access_token" in first, f"client credentials failed: {first}")
check(first.get("token_source") == "identity_provider", f"first call came from {first.get('token_source')}")
second = daemon.acquire_token_for_client(scopes=[API_DEFAULT])
check(second.get("token_source") == "cache" and second["access_token"] == first["access_token"],
      f"second call came from {second.get('token_source')}")
out["clientCredentialsCached"] = True
app_claims = verify_with_pyjwt(first["access_token"], "B2C_1_susi", API_APP_ID, policy_claim=False)
verified += 1
check(app_claims["azp"] == DAEMON[0] and app_claims["sub"] == DAEMON[2], f"app token subject {app_claims}")
check(app_claims["scp"] == "hello.read.all", f"app token scp {app_claims.get('scp')}")
hello = requests.get(f"{BASE}/hello", headers={"Authorization": "Bearer " + first["access_token"]}, verify=CA)
check(hello.status_code == 200 and hello.json()["application"] == DAEMON[0], f"/hello with an app token: {hello.text}")
out["appTokenRoles"] = hello.json()["roles"]

# A wrong secret: B2C's invalid_client, which msal hands back as the error.
wrong = confidential(DAEMON[0], "not-the-secret", "B2C_1_susi").acquire_token_for_client(scopes=[API_DEFAULT])
check(wrong.get("error") == "invalid_client", f"wrong secret answered {wrong}")
out["wrongSecret"] = wrong["error_description"].split(":")[0]

# 2. A web app: auth code redeemed with its secret, then a refresh (force_refresh) with the secret.
web = confidential(WEB_APP[0], WEB_APP[1], "B2C_1_susi")
flow = web.initiate_auth_code_flow([SCOPE], redirect_uri=WEB_APP[2], response_mode="query")
result = web.acquire_token_by_auth_code_flow(flow, sign_in(flow["auth_uri"], ALICE[0], ALICE[1], WEB_APP[2]))
check("access_token" in result, f"code with a secret failed: {result}")
verify_with_pyjwt(result["id_token"], "B2C_1_susi", WEB_APP[0])
verify_with_pyjwt(result["access_token"], "B2C_1_susi", API_APP_ID)
verified += 2
account = web.get_accounts()[0]
refreshed = web.acquire_token_silent([SCOPE], account=account, force_refresh=True)
check(refreshed and "access_token" in refreshed and refreshed["access_token"] != result["access_token"],
      f"refresh with a secret failed: {refreshed}")
verify_with_pyjwt(refreshed["access_token"], "B2C_1_susi", API_APP_ID)
verified += 1
out["webAccount"] = account["home_account_id"]

# 3. A custom policy: its own key; a user flow's JWKS does not know it.
custom = confidential(WEB_APP[0], WEB_APP[1], "B2C_1A_signup_signin")
flow = custom.initiate_auth_code_flow([SCOPE], redirect_uri=WEB_APP[2], response_mode="query")
cr = custom.acquire_token_by_auth_code_flow(flow, sign_in(flow["auth_uri"], ALICE[0], ALICE[1], WEB_APP[2]))
check("access_token" in cr, f"custom policy code failed: {cr}")
id_claims = verify_with_pyjwt(cr["id_token"], "B2C_1A_signup_signin", WEB_APP[0])
verify_with_pyjwt(cr["access_token"], "B2C_1A_signup_signin", API_APP_ID)
verified += 2
check(id_claims["acr"] == "b2c_1a_signup_signin" and id_claims["sub"] == ALICE[2] and "oid" not in id_claims,
      f"starter-pack claims {id_claims}")
try:
    verify_with_pyjwt(cr["access_token"], "B2C_1_susi", API_APP_ID, policy_claim=False)
    check(False, "a user flow's JWKS verified a custom policy's token")
except StopIteration:
    out["customKeyUnknownToUserFlows"] = True
app_custom = confidential(DAEMON[0], DAEMON[1], "B2C_1A_signup_signin").acquire_token_for_client(scopes=[API_DEFAULT])
verify_with_pyjwt(app_custom["access_token"], "B2C_1A_signup_signin", API_APP_ID, policy_claim=False)
verified += 1
check(jwt.get_unverified_header(app_custom["access_token"])["kid"] == jwt.get_unverified_header(cr["access_token"])["kid"],
      "an app token from a custom policy is signed with the custom key")
out["pyjwtVerified"] = verified
print(json.dumps(out))
