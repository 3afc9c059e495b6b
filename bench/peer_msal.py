"""msal-python's half of bench/peers.sh: acquire_token_silent on b2c's MSAL export, the way a script calls it.

Usage: peer_msal.py MODE CACHE_FILE AUTHORITY CLIENT_ID SCOPE HOME_ACCOUNT_ID [CALLS]
  once          one process, one call (what hyperfine times as a whole process): load the cache file, make the app
                (msal fetches the policy's discovery document), find the account, acquire_token_silent
  warm          one process; after one call, CALLS more timed calls of acquire_token_silent on the same app; prints
                "p50_ms X p99_ms Y calls N"
  once-refresh  as once, with force_refresh=True (a refresh grant against the emulator)
  warm-refresh  as warm, with force_refresh=True
The answer must come from where the mode says (token_source cache or identity_provider); otherwise exit 1. The CA of
the emulator comes from REQUESTS_CA_BUNDLE. Tokens are never printed.
"""
import statistics
import sys
import time

import msal

mode, cache_file, authority, client_id, scope, home_account_id = sys.argv[1:7]
calls = int(sys.argv[7]) if len(sys.argv) > 7 else 200
refresh = mode.endswith("refresh")
expected = "identity_provider" if refresh else "cache"

cache = msal.SerializableTokenCache()
with open(cache_file) as f:
    cache.deserialize(f.read())
app = msal.PublicClientApplication(client_id, authority=authority, token_cache=cache)
account = next((a for a in app.get_accounts() if a["home_account_id"] == home_account_id), None)
if account is None:
    sys.exit(f"peer_msal: no account {home_account_id} in {cache_file}")


def silent():
    result = app.acquire_token_silent([scope], account=account, force_refresh=refresh)
    if not result or result.get("token_source") != expected:
        source = result.get("token_source") if result else None
        error = result.get("error") if result else "no answer"
        sys.exit(f"peer_msal: expected a token from {expected}, got {source} ({error})")


silent()
if mode.startswith("warm"):
    times = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        silent()
        times.append((time.perf_counter_ns() - t0) / 1e6)
    times.sort()
    print(f"p50_ms {statistics.median(times):.4f} p99_ms {times[int(0.99 * (len(times) - 1))]:.4f} calls {len(times)}")
