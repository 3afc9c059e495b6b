"""msal-python on both sides of a twin tenant (High Scale Compatibility): the B2C side's web app through its user flow,
the External ID side's web app through its `oidc_authority`, the same person on both. PyJWT verifies each id token
against its own side's JWKS (and not the other's): the same oid, different issuers and subjects.

Usage: python twin_interop.py B2C_BASE CA_FILE EXTERNAL_ID_BASE
Prints one JSON line; exit 0 on success.
"""
import json
import sys

import jwt
import msal
import requests

from b2c_test_tenant import ALICE, BASE, CA, TENANT, WEB_APP, check, sign_in

EXTERNAL = sys.argv[3]
EXTERNAL_WEB_APP = ("5f8b2d4a-7c3e-4a9f-8b2d-6e4c8f0a3b7d", "WebAppEID-dev-secret-2026", "http://localhost/signin-oidc")


def keys_of(discovery_url):
    config = requests.get(discovery_url, verify=CA).json()
    return config["issuer"], jwt.PyJWKSet.from_dict(requests.get(config["jwks_uri"], verify=CA).json())


def verified(token, issuer, keys, audience):
    kid = jwt.get_unverified_header(token)["kid"]
    key = next((k for k in keys.keys if k.key_id == kid), None)
    check(key is not None, f"kid {kid} is not in this side's JWKS")
    return jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=issuer)


def signed_in(app, redirect):
    flow = app.initiate_auth_code_flow([], redirect_uri=redirect)
    result = app.acquire_token_by_auth_code_flow(flow, sign_in(flow["auth_uri"], ALICE[0], ALICE[1], redirect))
    check("id_token" in result, f"code redemption failed: {result}")
    return result["id_token"]


b2c_issuer, b2c_keys = keys_of(f"{BASE}/{TENANT}/B2C_1_susi/v2.0/.well-known/openid-configuration")
eid_issuer, eid_keys = keys_of(f"{EXTERNAL}/{TENANT}/v2.0/.well-known/openid-configuration")
check(b2c_issuer != eid_issuer, "each side has its own issuer")

old_app = msal.ConfidentialClientApplication(
    WEB_APP[0], client_credential=WEB_APP[1], authority=f"{BASE}/{TENANT}/B2C_1_susi", verify=CA)
new_app = msal.ConfidentialClientApplication(
    EXTERNAL_WEB_APP[0], client_credential=EXTERNAL_WEB_APP[1], oidc_authority=f"{EXTERNAL}/{TENANT}/v2.0", verify=CA)
old = verified(signed_in(old_app, WEB_APP[2]), b2c_issuer, b2c_keys, WEB_APP[0])
new_token = signed_in(new_app, EXTERNAL_WEB_APP[2])
new = verified(new_token, eid_issuer, eid_keys, EXTERNAL_WEB_APP[0])
check(old["oid"] == new["oid"] == ALICE[2], f"one object id: {old['oid']} {new['oid']}")
check(old["sub"] != new["sub"], "the subjects differ")
try:
    verified(new_token, eid_issuer, b2c_keys, EXTERNAL_WEB_APP[0])
    crossed = True
except SystemExit:
    crossed = False
check(not crossed, "an External ID token verified against the B2C side's keys")
print(json.dumps({"oid": new["oid"], "b2cIssuer": old["iss"], "externalIdIssuer": new["iss"], "b2cSub": old["sub"],
                  "externalIdSub": new["sub"], "b2cPolicy": old.get("tfp"), "externalIdTid": new.get("tid")}))
