"""msal-python's own interactive flow through an MFA user flow: `acquire_token_interactive` starts its loopback listener
and opens the browser through Python's `webbrowser` (here `$BROWSER` = the scripted agent, which does the password page
and the emailed code from the outbox, as a person would). The tokens are verified with PyJWT against the policy's JWKS.

Usage: python msal_mfa_interactive.py BASE_URL CA_FILE AGENT_PATH
Prints one JSON line; exit 0 on success.
"""
import json
import sys

import msal
import requests

from b2c_test_tenant import ALICE, API_APP_ID, BASE, CA, CLIENT_ID, SCOPE, TENANT, TENANT_ID, check, scripted_browser, verify_with_pyjwt

POLICY = "B2C_1_susi_mfa"
agent_log, clean_up = scripted_browser(sys.argv[3], ALICE[0], ALICE[1])
app = msal.PublicClientApplication(CLIENT_ID, authority=f"{BASE}/{TENANT}/{POLICY}", verify=CA)
before = requests.get(f"{BASE}/_admin/outbox", verify=CA).json()["messages"]
result = app.acquire_token_interactive([SCOPE], timeout=60, prompt="login")
check("access_token" in result, f"interactive sign-in failed: {result}; the agent said: {agent_log()}")
after = requests.get(f"{BASE}/_admin/outbox", verify=CA).json()["messages"]
sent = [m for m in after if m not in before]
check(len(sent) == 1 and sent[0]["purpose"] == "mfa" and sent[0]["channel"] == "email", f"the MFA code sent: {sent}")
claims = verify_with_pyjwt(result["id_token"], POLICY, CLIENT_ID)
verify_with_pyjwt(result["access_token"], POLICY, API_APP_ID)
account = app.get_accounts()[0]["home_account_id"]
check(account == f"{ALICE[2]}-{POLICY.lower()}.{TENANT_ID}", f"home_account_id {account}")
print(json.dumps({"account": account, "tfp": claims["tfp"], "mfaCodes": len(sent)}))
clean_up()
