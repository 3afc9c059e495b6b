"""An API configured for both sides of a twin tenant (High Scale Compatibility), as docs/migration.md says to build one:
it reads both sides' metadata, looks each token's `iss` up among their issuers and verifies the token with that side's
keys (PyJWT). A person's access token from either side (msal) is accepted, as one person; a token of another tenant —
the same tenant id, audience and person, another issuer and keys — is refused.

Usage: python twin_api_interop.py B2C_BASE CA_FILE EXTERNAL_ID_BASE OTHER_TENANTS_ACCESS_TOKEN
Prints one JSON line; exit 0 on success.
"""
import json
import sys

import jwt
import msal
import requests

from b2c_test_tenant import ALICE, API_APP_ID, BASE, CA, CLIENT_ID, SCOPE, TENANT, check, sign_in

EXTERNAL, OTHER_TENANTS_TOKEN = sys.argv[3], sys.argv[4]
EXTERNAL_CLIENT = "4e7a1c3f-6b2d-4f8e-9a1c-5d3b7e9f2a6c"


class API:
    """A resource server's token validation: the sides it trusts (their metadata documents) and its audience."""

    def __init__(self, metadata_urls, audience):
        self.audience = audience
        self.keys_by_issuer = {}
        for url in metadata_urls:
            config = requests.get(url, verify=CA).json()
            keys = requests.get(config["jwks_uri"], verify=CA).json()
            self.keys_by_issuer[config["issuer"]] = jwt.PyJWKSet.from_dict(keys)

    def validate(self, token):
        """The token's claims; raises jwt.InvalidTokenError when the token is not one of the trusted sides' for this API."""
        issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
        keys = self.keys_by_issuer.get(issuer)
        if keys is None:
            raise jwt.InvalidIssuerError(f"{issuer} is not one of the configured issuers")
        kid = jwt.get_unverified_header(token).get("kid")
        key = next((k for k in keys.keys if k.key_id == kid), None)
        if key is None:
            raise jwt.InvalidKeyError(f"kid {kid} is not one of {issuer}'s keys")
        return jwt.decode(token, key.key, algorithms=["RS256"], audience=self.audience, issuer=issuer)


def access_token(app):
    redirect = "http://localhost:8400"
    flow = app.initiate_auth_code_flow([SCOPE], redirect_uri=redirect, response_mode="query")
    result = app.acquire_token_by_auth_code_flow(flow, sign_in(flow["auth_uri"], ALICE[0], ALICE[1], redirect))
    check("access_token" in result, f"code redemption failed: {result}")
    return result["access_token"]


api = API(
    [f"{BASE}/{TENANT}/B2C_1_susi/v2.0/.well-known/openid-configuration",
     f"{EXTERNAL}/{TENANT}/v2.0/.well-known/openid-configuration"],
    audience=API_APP_ID)
old = api.validate(access_token(msal.PublicClientApplication(CLIENT_ID, authority=f"{BASE}/{TENANT}/B2C_1_susi", verify=CA)))
new = api.validate(access_token(
    msal.PublicClientApplication(EXTERNAL_CLIENT, oidc_authority=f"{EXTERNAL}/{TENANT}/v2.0", verify=CA)))
check(old["oid"] == new["oid"] == ALICE[2], f"one person: {old['oid']} {new['oid']}")
check(old["iss"] != new["iss"], "each side its issuer")
try:
    api.validate(OTHER_TENANTS_TOKEN)
    refused = None
except jwt.InvalidTokenError as error:
    refused = str(error)
check(refused is not None, "another tenant's token was accepted")
print(json.dumps({"b2cIssuer": old["iss"], "externalIdIssuer": new["iss"], "oid": new["oid"],
                  "otherTenant": jwt.decode(OTHER_TENANTS_TOKEN, options={"verify_signature": False})["iss"],
                  "otherTenantRefused": refused}))
