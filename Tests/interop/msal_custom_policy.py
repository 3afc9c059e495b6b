"""msal-python against a custom policy (the tenant started with Examples/custom-policies): its own interactive flow
through B2C_1A_signup_signin's XML journey (`$BROWSER` = the scripted agent, which fills the unified page's `signInName`
and `password`), a refresh through the policy's RedeemRefreshToken journey, and PyJWT checking both id tokens against the
custom policy's JWKS. The tokens carry what the relying party names: `sub` the object id, `tid`, one `email`, no `oid`.

Usage: python msal_custom_policy.py BASE_URL CA_FILE AGENT_PATH [--starter-pack]
With --starter-pack (the tenant started with one of Microsoft's starter packs, placeholders filled), the id token's
`email` is not asked for: the packs' local sign-in does not output one, as in B2C.
Prints one JSON line; exit 0 on success.
"""
import json
import os
import sys

import msal

from b2c_test_tenant import ALICE, BASE, CA, CLIENT_ID, SCOPE, TENANT, TENANT_ID, check, scripted_browser, verify_with_pyjwt

POLICY = "B2C_1A_signup_signin"
PACK = "--starter-pack" in sys.argv[4:]
agent_log, clean_up = scripted_browser(sys.argv[3], ALICE[0], ALICE[1])
if PACK:
    os.environ["B2C_AGENT_PHONE"] = "+15555550142"  # the MFA pack enrols a phone at the first sign-in
app = msal.PublicClientApplication(CLIENT_ID, authority=f"{BASE}/{TENANT}/{POLICY}", verify=CA)
result = app.acquire_token_interactive([SCOPE], timeout=60, prompt="login")
check("access_token" in result, f"interactive sign-in failed: {result}; the agent said: {agent_log()}")
claims = verify_with_pyjwt(result["id_token"], POLICY, CLIENT_ID)
check(claims["sub"] == ALICE[2] and claims["tid"] == TENANT_ID and (PACK or claims["email"] == ALICE[0]), f"claims {claims}")
check("oid" not in claims and "emails" not in claims and "tfp" not in claims, f"user-flow claims in {claims}")
account = app.get_accounts()[0]
check(account["home_account_id"] == f"{ALICE[2]}-{POLICY.lower()}.{TENANT_ID}", f"home_account_id {account}")
refreshed = app.acquire_token_silent([SCOPE], account=account, force_refresh=True)
check(refreshed and "id_token" in refreshed, f"refresh through the Token journey: {refreshed}")
again = verify_with_pyjwt(refreshed["id_token"], POLICY, CLIENT_ID)
check(again["sub"] == claims["sub"] and again.get("email") == claims.get("email"), f"refreshed claims {again}")
print(json.dumps({"account": account["home_account_id"], "acr": claims["acr"], "refreshedSub": again["sub"]}))
clean_up()
