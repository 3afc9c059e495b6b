"""msal-python's on-behalf-of flow against the local External ID tenant: the person signs in to the public client for the
hello API; the hello API (a confidential client) trades that token with acquire_token_on_behalf_of for one to Microsoft
Graph, and calls /me as the person. A token for another audience is refused as Entra refuses it.

Usage: python obo_interop.py BASE_URL CA_FILE
Prints one JSON line; exit 0 on success.
"""
import json

import msal
import requests

from b2c_test_tenant import ALICE, API_APP_ID, BASE, CA, CLIENT_ID, SCOPE, TENANT, check, sign_in

AUTHORITY = f"{BASE}/{TENANT}/v2.0"
HELLO_API = (API_APP_ID, "HelloAPI-dev-secret-2026")

app = msal.PublicClientApplication(CLIENT_ID, oidc_authority=AUTHORITY, verify=CA)
flow = app.initiate_auth_code_flow([SCOPE], redirect_uri="http://localhost:8400")
person = app.acquire_token_by_auth_code_flow(flow, sign_in(flow["auth_uri"], ALICE[0], ALICE[1], "http://localhost:8400"))
check("access_token" in person, f"sign-in failed: {person}")

api = msal.ConfidentialClientApplication(HELLO_API[0], client_credential=HELLO_API[1], oidc_authority=AUTHORITY, verify=CA)
downstream = api.acquire_token_on_behalf_of(person["access_token"], ["User.Read"])
check("access_token" in downstream, f"on-behalf-of failed: {downstream}")
me = requests.get(f"{BASE}/graph/v1.0/me", headers={"Authorization": "Bearer " + downstream["access_token"]}, verify=CA)
check(me.status_code == 200 and me.json().get("id") == ALICE[2], f"Graph /me as Alice: {me.status_code} {me.text[:300]}")

# Graph's token is not for the hello API: presented as the assertion, it is refused.
wrong = api.acquire_token_on_behalf_of(downstream["access_token"], ["User.Read"])
check(wrong.get("error") == "invalid_grant" and "AADSTS50013" in wrong.get("error_description", ""), f"audience: {wrong}")
print(json.dumps({"me": me.json().get("mail"), "wrongAudience": wrong.get("error")}))
