"""msal-python's own interactive flow through an MFA user flow: `acquire_token_interactive` starts its loopback listener
and opens the browser through Python's `webbrowser` (here `$BROWSER` = the scripted agent, which does the password page
and the emailed code from the outbox, as a person would). The tokens are verified with PyJWT against the policy's JWKS.

Usage: python msal_mfa_interactive.py BASE_URL CA_FILE AGENT_PATH
Prints one JSON line; exit 0 on success.
"""
import json
import os
import shlex
import sys
import tempfile

import msal
import requests

from b2c_test_tenant import ALICE, API_APP_ID, BASE, CA, CLIENT_ID, SCOPE, TENANT, TENANT_ID, check, verify_with_pyjwt

POLICY = "B2C_1_susi_mfa"
# Python's webbrowser runs $BROWSER as one program and waits for it to exit, as a browser's launcher does at once: a
# small launcher starts the agent in the background (its output kept for a failure), so that msal's listener can take
# its answer.
log = tempfile.NamedTemporaryFile(prefix="b2c-agent-", suffix=".log", delete=False).name
launcher = tempfile.NamedTemporaryFile("w", prefix="b2c-browser-", suffix=".sh", delete=False)
launcher.write(f"#!/bin/sh\n{shlex.quote(sys.argv[3])} \"$1\" >>{shlex.quote(log)} 2>&1 &\n")
launcher.close()
os.chmod(launcher.name, 0o700)
os.environ.update({"BROWSER": launcher.name, "B2C_AGENT_EMAIL": ALICE[0], "B2C_AGENT_PASSWORD": ALICE[1], "B2C_AGENT_CA": CA})
app = msal.PublicClientApplication(CLIENT_ID, authority=f"{BASE}/{TENANT}/{POLICY}", verify=CA)
before = requests.get(f"{BASE}/_admin/outbox", verify=CA).json()["messages"]
result = app.acquire_token_interactive([SCOPE], timeout=60, prompt="login")
check("access_token" in result, f"interactive sign-in failed: {result}; the agent said: {open(log).read()}")
after = requests.get(f"{BASE}/_admin/outbox", verify=CA).json()["messages"]
sent = [m for m in after if m not in before]
check(len(sent) == 1 and sent[0]["purpose"] == "mfa" and sent[0]["channel"] == "email", f"the MFA code sent: {sent}")
claims = verify_with_pyjwt(result["id_token"], POLICY, CLIENT_ID)
verify_with_pyjwt(result["access_token"], POLICY, API_APP_ID)
account = app.get_accounts()[0]["home_account_id"]
check(account == f"{ALICE[2]}-{POLICY.lower()}.{TENANT_ID}", f"home_account_id {account}")
print(json.dumps({"account": account, "tfp": claims["tfp"], "mfaCodes": len(sent)}))
os.unlink(launcher.name)
os.unlink(log)
