#!/usr/bin/env bash
# Benchmark 2: the refresh path.
#
#   figure: `b2c token --force-refresh` against the local emulator (TLS on loopback, release build of both)
#   floor:  one `curl` POST of the same refresh grant (same form fields, same token endpoint, same CA) per run
#   target: p50 <= 2x the floor
#
# Both sides pay the same server work (two RS256 signatures, the refresh-token rotation in SQLite) and one TLS
# handshake. b2c additionally starts up, selects the account, takes the refresh lock, reads the cached discovery
# document, validates the new id token and stores the result in one transaction. The emulator keeps rotated refresh
# tokens valid until their own expiry, so the curl floor can POST the same grant over and over.
#
# Knobs: RUNS (50), WARMUP (3), EMULATOR_STATE (file | memory; default file).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-50}
WARMUP=${WARMUP:-3}
EMULATOR_STATE=${EMULATOR_STATE:-file}

need hyperfine sqlite3 curl "$PY"
bench_init
bench_build

start_emulator emulator "$EMULATOR_STATE"
home=$BENCH_TMP/home
agent_signin "$home" alice@contoso.com 'Alice-dev-2026!' B2C_1_susi
export B2C_CONFIG=$EMU_CONFIG B2C_HOME=$home
store=$home/store.sqlite
policy=B2C_1_susi

# The token endpoint from the policy's discovery document, and the refresh grant b2c sends, in a file.
token_url=$(token_endpoint "$policy")
form=$BENCH_TMP/refresh.form
make_refresh_form "$store" "$policy" "$form"

curl_cmd="curl -s -o /dev/null --cacert $EMU_CA -H Accept:application/json --data-binary @$form $token_url"
status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$EMU_CA" -H Accept:application/json --data-binary @"$form" "$token_url")
[[ $status == 200 ]] || die "the curl refresh grant answered HTTP $status"
from_cache=$("$B2C" token --force-refresh --format json | json_field fromCache)
[[ $from_cache == false ]] || die "b2c token --force-refresh did not refresh (fromCache: $from_cache)"

json=$BENCH_TMP/refresh.json
run_hyperfine "$json" "$RUNS" "$WARMUP" "$B2C token --force-refresh" "$curl_cmd" "$B2C token"
t_refresh=$(p50_ms "$json" 0)
t_curl=$(p50_ms "$json" 1)
t_hit=$(p50_ms "$json" 2)
# Every measured request must have succeeded: count the emulator's log of refresh grants by outcome.
outcomes=$(curl -sSf --cacert "$EMU_CA" "$EMU_BASE/_admin/log" | "$PY" -c '
import json, sys, collections
c = collections.Counter(r.get("outcome") for r in json.load(sys.stdin).get("requests", []) if r.get("grantType") == "refresh_token")
print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))')

machine_line
say "emulator: $EMU_BASE ($EMULATOR_STATE state), token endpoint from discovery; refresh grants logged: $outcomes"
report_ratio "token refresh (b2c token --force-refresh)" "$t_refresh" "curl POST of the same grant" "$t_curl" 2
printf '  for scale: b2c token (cache hit, same store) p50 %.2f ms = %sx the curl floor\n' "$t_hit" "$(ratio "$t_hit" "$t_curl")"
exit 0
