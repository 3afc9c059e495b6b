"""Authlib (an OIDC library no one here wrote) validates the emulator's hybrid and implicit answers, hashes included.

Usage: python oidc_interop.py BASE_URL CA_FILE
Exercises: `code id_token` (c_hash) then the code redeemed by Authlib's OAuth2Session with client_secret_basic;
`id_token token` (at_hash); a tampered code or access token must fail Authlib's hash checks. Prints one JSON line.
"""
import json
import secrets
import urllib.parse
import warnings

import requests
from authlib.integrations.requests_client import OAuth2Session

warnings.simplefilter("ignore")  # authlib.jose announces its move to joserfc; its OIDC claim classes still use it
from authlib.jose import JsonWebKey, jwt  # noqa: E402
from authlib.oidc.core import HybridIDToken, ImplicitIDToken

from b2c_test_tenant import ALICE, API_APP_ID, CA, SCOPE, WEB_APP, check, discovery, sign_in

POLICY = "B2C_1_susi"
config = discovery(POLICY)
keys = JsonWebKey.import_key_set(requests.get(config["jwks_uri"], verify=CA).json())
out = {}


def front_channel(response_type, scope):
    nonce = secrets.token_urlsafe(16)
    query = {"client_id": WEB_APP[0], "response_type": response_type, "redirect_uri": WEB_APP[2], "scope": scope,
             "response_mode": "fragment", "state": secrets.token_urlsafe(8), "nonce": nonce}
    answer = sign_in(config["authorization_endpoint"] + "?" + urllib.parse.urlencode(query), ALICE[0], ALICE[1], WEB_APP[2])
    check(answer.get("state") == query["state"], f"state of {answer}")
    return answer, nonce


def validated(id_token, cls, nonce, **params):
    claims = jwt.decode(id_token, keys, claims_cls=cls,
                        claims_options={"iss": {"essential": True, "value": config["issuer"]},
                                        "aud": {"essential": True, "value": WEB_APP[0]}},
                        claims_params=dict(params, nonce=nonce, client_id=WEB_APP[0]))
    claims.validate()
    return claims


def rejected(id_token, cls, nonce, **params):
    try:
        validated(id_token, cls, nonce, **params)
    except Exception as e:  # authlib's or joserfc's InvalidClaimError, depending on the version
        return str(e)
    check(False, f"Authlib accepted a tampered {sorted(params)}")


# 1. Hybrid: `code id_token` — exactly code, id_token, state; Authlib checks c_hash.
hybrid, nonce = front_channel("code id_token", f"openid offline_access {SCOPE}")
check(set(hybrid) == {"code", "id_token", "state"}, f"hybrid fragment fields {sorted(hybrid)}")
validated(hybrid["id_token"], HybridIDToken, nonce, code=hybrid["code"])
out["hybridRejectsTamperedCode"] = rejected(hybrid["id_token"], HybridIDToken, nonce, code=hybrid["code"] + "x")

# The code, redeemed by Authlib's own client with HTTP Basic client authentication.
session = OAuth2Session(WEB_APP[0], WEB_APP[1], token_endpoint_auth_method="client_secret_basic",
                        redirect_uri=WEB_APP[2], scope=f"openid offline_access {SCOPE}")
session.verify = CA
token = session.fetch_token(config["token_endpoint"], code=hybrid["code"], grant_type="authorization_code")
check("access_token" in token and "refresh_token" in token, f"Authlib's redemption: {sorted(token)}")
validated(token["id_token"], ImplicitIDToken, nonce, access_token=token["access_token"])
refreshed = session.refresh_token(config["token_endpoint"], refresh_token=token["refresh_token"])
check(refreshed["access_token"] != token["access_token"], "Authlib's refresh")
out["basicRedeemedAndRefreshed"] = True

# 2. Implicit: `id_token token` — Authlib checks at_hash.
implicit, nonce = front_channel("id_token token", f"openid {SCOPE}")
validated(implicit["id_token"], ImplicitIDToken, nonce, access_token=implicit["access_token"])
out["implicitRejectsTamperedToken"] = rejected(implicit["id_token"], ImplicitIDToken, nonce,
                                               access_token=implicit["access_token"] + "x")
out["implicitFields"] = sorted(implicit)
access = jwt.decode(implicit["access_token"], keys)
check(access["aud"] == API_APP_ID, f"implicit access token audience {access['aud']}")
print(json.dumps(out))
