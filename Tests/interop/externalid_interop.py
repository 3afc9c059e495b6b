"""msal-python against an External ID tenant, through its `oidc_authority` (no policy in any URL): a daemon's client
credentials give an Entra-shaped app-only token (`roles`, `idtyp: app`) that PyJWT verifies against the tenant's JWKS;
a web app's code flow for Microsoft Graph's `User.Read` gives a token that a plain `requests` call to Graph `/me`
carries.

Usage: python externalid_interop.py BASE_URL CA_FILE
Prints one JSON line; exit 0 on success.
"""
import json

import jwt
import msal
import requests

from b2c_test_tenant import ALICE, API_APP_ID, API_DEFAULT, BASE, CA, DAEMON, TENANT, TENANT_ID, WEB_APP, check, sign_in

AUTHORITY = f"{BASE}/{TENANT}/v2.0"
discovery = requests.get(f"{AUTHORITY}/.well-known/openid-configuration", verify=CA).json()
keys = jwt.PyJWKSet.from_dict(requests.get(discovery["jwks_uri"], verify=CA).json())


def verified(token, audience):
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in keys.keys if k.key_id == kid)
    return jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=discovery["issuer"])


daemon = msal.ConfidentialClientApplication(DAEMON[0], client_credential=DAEMON[1], oidc_authority=AUTHORITY, verify=CA)
app_token = daemon.acquire_token_for_client([API_DEFAULT])
check("access_token" in app_token, f"client credentials failed: {app_token}")
app_claims = verified(app_token["access_token"], API_APP_ID)
check(app_claims.get("idtyp") == "app" and "scp" not in app_claims and "tfp" not in app_claims, f"app token {app_claims}")

web = msal.ConfidentialClientApplication(WEB_APP[0], client_credential=WEB_APP[1], oidc_authority=AUTHORITY, verify=CA)
flow = web.initiate_auth_code_flow(["User.Read"], redirect_uri=WEB_APP[2])
answer = sign_in(flow["auth_uri"], ALICE[0], ALICE[1], WEB_APP[2])
result = web.acquire_token_by_auth_code_flow(flow, answer)
check("access_token" in result, f"code redemption failed: {result}")
id_claims = result["id_token_claims"]
check(id_claims.get("tid") == TENANT_ID and id_claims.get("ver") == "2.0" and "tfp" not in id_claims, f"id token {id_claims}")
graph_claims = verified(result["access_token"], "00000003-0000-0000-c000-000000000000")
me = requests.get(f"{BASE}/graph/v1.0/me", headers={"Authorization": "Bearer " + result["access_token"]}, verify=CA)
check(me.status_code == 200, f"Graph /me answered {me.status_code}: {me.text}")
print(json.dumps({"appRoles": app_claims.get("roles"), "graphScope": graph_claims.get("scp"), "me": me.json().get("mail"),
                  "idTokenOid": id_claims.get("oid")}))
