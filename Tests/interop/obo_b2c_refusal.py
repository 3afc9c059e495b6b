"""msal-python's on-behalf-of call at a B2C policy (the local B2C tenant): a person's real access token for the hello API,
from the ROPC user flow, traded by the hello API's confidential client with acquire_token_on_behalf_of at B2C_1_susi —
B2C has no on-behalf-of, and msal gets B2C's refusal (unsupported_grant_type, AADB2C90086) as an answer, not a crash.

Usage: python obo_b2c_refusal.py BASE_URL CA_FILE
Prints one JSON line; exit 0 on success.
"""
import json
import urllib.parse

import msal

from b2c_test_tenant import ALICE, API_APP_ID, BASE, CA, CLIENT_ID, SCOPE, TENANT, check

# msal probes https://<host>/common/userrealm/ on port 443 before ROPC (msal_interop.py says why): skip the probe.
msal.authority.Authority._domains_without_user_realm_discovery.add(urllib.parse.urlparse(BASE).hostname)
person = msal.PublicClientApplication(CLIENT_ID, authority=f"{BASE}/{TENANT}/B2C_1_ROPC_Auth", verify=CA)
signed_in = person.acquire_token_by_username_password(ALICE[0], ALICE[1], [SCOPE])
check("access_token" in signed_in, f"ROPC sign-in failed: {signed_in}")

api = msal.ConfidentialClientApplication(
    API_APP_ID, client_credential="HelloAPI-dev-secret-2026", authority=f"{BASE}/{TENANT}/B2C_1_susi", verify=CA)
refused = api.acquire_token_on_behalf_of(signed_in["access_token"], [SCOPE])
check("access_token" not in refused, f"B2C answered an on-behalf-of request with a token: {refused}")
check(refused.get("error") == "unsupported_grant_type" and "AADB2C90086" in refused.get("error_description", ""),
      f"B2C's refusal: {refused}")
print(json.dumps({"error": refused["error"], "code": "AADB2C90086"}))
