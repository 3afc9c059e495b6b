"""msal-python's device flow against the local External ID tenant: initiate_device_flow, then acquire_token_by_device_flow
polling while a person (this script, over HTTP) types the code at the verification page and signs in through the tenant's
pages; PyJWT verifies the tokens. The same call at a B2C policy gets B2C's refusal.

Usage: python device_code_interop.py EXTERNAL_ID_BASE_URL CA_FILE B2C_BASE_URL (a twin tenant's two sides)
Prints one JSON line; exit 0 on success.
"""
import json
import sys
import threading
import urllib.parse

import jwt
import msal
import requests

from b2c_test_tenant import ALICE, BASE, CA, CLIENT_ID, SCOPE, TENANT, FormParser, check

B2C = sys.argv[3]

EXTERNAL_CLIENT = "4e7a1c3f-6b2d-4f8e-9a1c-5d3b7e9f2a6c"  # the twin's External ID public client
app = msal.PublicClientApplication(EXTERNAL_CLIENT, oidc_authority=f"{BASE}/{TENANT}/v2.0", verify=CA)
flow = app.initiate_device_flow(scopes=[SCOPE])
check("user_code" in flow and flow.get("interval") == 5, f"device flow: {flow}")
answer = {}
poller = threading.Thread(target=lambda: answer.update(app.acquire_token_by_device_flow(flow)))
poller.start()

# The person, at another browser: the page, the code, then the tenant's sign-in page.
browser = requests.Session()
browser.verify = CA
page = browser.get(flow["verification_uri"])
forms = FormParser()
forms.feed(page.text)
code_form = next(f for f in forms.forms if f["id"] == "deviceCode")
signin_page = browser.post(urllib.parse.urljoin(page.url, code_form["action"]), data={"otc": flow["user_code"], "answer": "next"})
forms = FormParser()
forms.feed(signin_page.text)
signin = next((f for f in forms.forms if f["id"] == "localAccountForm"), None)
check(signin is not None, f"no sign-in page after the code: {signin_page.status_code} {signin_page.text[:300]}")
done = browser.post(urllib.parse.urljoin(signin_page.url, signin["action"]),
                    data=dict(signin["fields"], logonIdentifier=ALICE[0], password=ALICE[1]))
check(done.status_code == 200 and "signed in" in done.text, f"after the sign-in: {done.status_code} {done.text[:300]}")
poller.join(timeout=60)
check("access_token" in answer, f"the device got no token: {answer}")
config = requests.get(f"{BASE}/{TENANT}/v2.0/.well-known/openid-configuration", verify=CA).json()
keys = jwt.PyJWKSet.from_dict(requests.get(config["jwks_uri"], verify=CA).json())
kid = jwt.get_unverified_header(answer["id_token"])["kid"]
claims = jwt.decode(answer["id_token"], next(k for k in keys.keys if k.key_id == kid).key, algorithms=["RS256"],
                    audience=EXTERNAL_CLIENT, issuer=config["issuer"])
check(claims["oid"] == ALICE[2], f"id token {claims}")

# A B2C policy's metadata names no device authorization endpoint, so msal stops before asking; asked anyway, the policy's
# endpoint answers B2C's refusal.
b2c = msal.PublicClientApplication(CLIENT_ID, authority=f"{B2C}/{TENANT}/B2C_1_susi", verify=CA)
try:
    b2c.initiate_device_flow(scopes=[SCOPE])
    check(False, "msal started a device flow at a B2C policy")
except ValueError as e:
    check("device authorization endpoint" in str(e), f"msal's refusal: {e}")
refused = requests.post(f"{B2C}/{TENANT}/B2C_1_susi/oauth2/v2.0/devicecode", data={"client_id": CLIENT_ID, "scope": SCOPE}).json()
check(refused.get("error") == "unsupported_grant_type" and "AADB2C90086" in refused.get("error_description", ""),
      f"B2C's refusal: {refused}")
print(json.dumps({"oid": claims["oid"], "scope": answer.get("scope"), "b2cError": refused.get("error")}))
