#!/usr/bin/env bash
# Benchmark 2: the refresh path.
#
#   figure: `b2c token --force-refresh` against the local emulator (TLS on loopback, release build of both)
#   floor:  one `curl` POST of the same refresh grant (same form fields, same token endpoint, same CA) per run
#   target: p50 <= 2x the floor
#
# Both sides pay the same server work (two RS256 signatures, the grant's read and the new refresh token's seal) and one TLS
# handshake. b2c additionally starts up, selects the account, takes the refresh lock, reads the cached discovery
# document, validates the new id token and stores the result in one transaction. The emulator keeps redeemed refresh
# tokens valid until their own expiry, so the curl floor can POST the same grant over and over.
#
# The runs alternate: ROUNDS rounds of hyperfine, each running every command RUNS / ROUNDS times, and each figure is
# the p50 of all its rounds' runs. This machine's speed drifts by 10-20 % from one second to the next (a shared virtual
# machine); in one block of runs per command, as before, the drift fell on one side of the ratio only and moved it by
# as much as the change being measured (bench/README.md, item 3).
#
# Knobs: RUNS (50), ROUNDS (5), WARMUP (3), EMULATOR_STATE (file | memory; default file).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-50}
ROUNDS=${ROUNDS:-5}
WARMUP=${WARMUP:-3}
(( ROUNDS >= 1 && RUNS >= ROUNDS && RUNS % ROUNDS == 0 )) || die "RUNS ($RUNS) must be a positive multiple of ROUNDS ($ROUNDS)"
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

jsons=()
for ((round = 1; round <= ROUNDS; round++)); do
    json=$BENCH_TMP/refresh-$round.json
    run_hyperfine "$json" $((RUNS / ROUNDS)) "$WARMUP" "$B2C token --force-refresh" "$curl_cmd" "$B2C token"
    jsons+=("$json")
done
t_refresh=$(p50_ms_rounds 0 "${jsons[@]}")
t_curl=$(p50_ms_rounds 1 "${jsons[@]}")
t_hit=$(p50_ms_rounds 2 "${jsons[@]}")
# Each round's own ratio, to show the spread the rounds smooth.
spread=$(for json in "${jsons[@]}"; do ratio "$(p50_ms "$json" 0)" "$(p50_ms "$json" 1)"; echo; done \
    | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }')
# Every measured request must have succeeded: count the emulator's log of refresh grants by outcome.
outcomes=$(curl -sSf --cacert "$EMU_CA" "$EMU_BASE/_admin/log" | "$PY" -c '
import json, sys, collections
c = collections.Counter(r.get("outcome") for r in json.load(sys.stdin).get("requests", []) if r.get("grantType") == "refresh_token")
print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))')

machine_line
say "emulator: $EMU_BASE ($EMULATOR_STATE state), token endpoint from discovery; refresh grants logged: $outcomes"
report_ratio "token refresh (b2c token --force-refresh)" "$t_refresh" "curl POST of the same grant" "$t_curl" 2
printf '  %d rounds of %d runs per command, alternating; the rounds'"'"' own ratios: %sx\n' "$ROUNDS" $((RUNS / ROUNDS)) "$spread"
printf '  for scale: b2c token (cache hit, same store) p50 %.2f ms = %sx the curl floor\n' "$t_hit" "$(ratio "$t_hit" "$t_curl")"
exit 0
