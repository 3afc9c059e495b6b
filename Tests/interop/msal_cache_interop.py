"""b2c's MSAL cache export read by msal-python and msal-extensions, and msal-python's own cache for b2c to import.

Usage: python msal_cache_interop.py BASE_URL CA_FILE EXPORTED_FILE WRITTEN_FILE
1. msal-python deserializes b2c's export: the account is there, acquire_token_silent returns the exported access
   token from the cache; once that token has expired it refreshes against the emulator with the exported refresh token.
2. msal-extensions' PersistedTokenCache (FilePersistence) reads the same file.
3. msal-python signs Bob in (auth code + PKCE through the pages) and writes its cache to WRITTEN_FILE for `b2c import`.
Prints one JSON line; exit 0 on success.
"""
import json
import shutil
import sys
import time

import msal
from msal_extensions import FilePersistence, PersistedTokenCache

from b2c_test_tenant import ALICE, BASE, BOB, CA, CLIENT_ID, SCOPE, TENANT, check, sign_in

EXPORTED, WRITTEN = sys.argv[3], sys.argv[4]
AUTHORITY = f"{BASE}/{TENANT}/B2C_1_susi"
out = {}

# 1. The export in msal-python.
exported = json.load(open(EXPORTED))
exported_at = next(iter(exported["AccessToken"].values()))["secret"]
cache = msal.SerializableTokenCache()
cache.deserialize(open(EXPORTED).read())
app = msal.PublicClientApplication(CLIENT_ID, authority=AUTHORITY, token_cache=cache, verify=CA)
accounts = app.get_accounts()
check(len(accounts) == 1 and accounts[0]["home_account_id"].startswith(ALICE[2]), f"accounts from the export: {accounts}")
out["account"] = accounts[0]["home_account_id"]
cached = app.acquire_token_silent([SCOPE], account=accounts[0])
check(cached and cached.get("token_source") == "cache" and cached["access_token"] == exported_at, f"silent from the export: {cached}")
out["servedFromExport"] = True
for entry in cache._cache["AccessToken"].values():  # the exported access token expires
    entry["expires_on"] = str(int(time.time()) - 60)
refreshed = app.acquire_token_silent([SCOPE], account=accounts[0])
check(refreshed and refreshed.get("token_source") == "identity_provider" and refreshed["access_token"] != exported_at,
      f"refresh with the exported refresh token: {refreshed}")
out["refreshedWithExportedRefreshToken"] = True

# 2. msal-extensions reads the same file.
copy = EXPORTED + ".extensions"
shutil.copy(EXPORTED, copy)
persisted = PersistedTokenCache(FilePersistence(copy))
ext_app = msal.PublicClientApplication(CLIENT_ID, authority=AUTHORITY, token_cache=persisted, verify=CA)
ext_accounts = ext_app.get_accounts()
check(len(ext_accounts) == 1, f"msal-extensions accounts: {ext_accounts}")
ext_cached = ext_app.acquire_token_silent([SCOPE], account=ext_accounts[0])
check(ext_cached and ext_cached.get("token_source") == "cache", f"msal-extensions silent: {ext_cached}")
out["msalExtensions"] = True

# 3. msal-python's own sign-in, written for b2c.
mine = msal.SerializableTokenCache()
bob_app = msal.PublicClientApplication(CLIENT_ID, authority=AUTHORITY, token_cache=mine, verify=CA)
flow = bob_app.initiate_auth_code_flow([SCOPE], redirect_uri="http://localhost:8400", response_mode="query")
result = bob_app.acquire_token_by_auth_code_flow(flow, sign_in(flow["auth_uri"], BOB[0], BOB[1], "http://localhost:8400"))
check("access_token" in result, f"msal sign-in: {result}")
with open(WRITTEN, "w") as f:
    f.write(mine.serialize())
out["writtenAccessToken"] = result["access_token"]
print(json.dumps(out))
