#!/usr/bin/env bash
# Benchmark: b2c against the tool a user would otherwise script, msal-python, on the same content in the same run.
#
#   content: 10,000 people x 3 policies (one real sign-in plus seed_store.py), exported with
#            `b2c export --format msal` into an MSAL token cache file that msal-python loads
#   cache hit (the current person's access token for the default policy and the first API):
#     b2c token as a process, vs msal-python acquire_token_silent (a) as a whole process the way a script calls it
#     (start Python, import msal, load the cache file, make the app, find the account, one call), (b) per call inside
#     a warm process (the app made and the cache loaded once)
#   refresh against the emulator (TLS, loopback): b2c token --force-refresh as a process, vs msal-python
#     acquire_token_silent(force_refresh=True) as a whole process and per call in a warm process
#   library: B2CKit's acquireTokenSilently in a warm process (b2c-bench library-silent: one client, CALLS timed calls,
#     each a cache hit) beside msal-python's warm in-process call, on the same content
#   target: b2c's cache hit as a process <= msal-python's whole process (a user's alternative); B2CKit in process
#           >= 20x faster per call than msal-python in process (p50; p99 printed); the warm in-process msal call is also
#           printed beside b2c's process for scale (it pays no process start; b2c cannot be called that way from a shell)
#
# msal-python is installed from PyPI into a venv this script makes (<repo>/.build-bench/venv-msal). msal-python makes
# its app by fetching the policy's discovery document, so the emulator runs during the whole benchmark; b2c's cache hit
# touches no network (checked by token-cache-hit.sh and startup-profile.sh).
#
# Knobs: PEOPLE (10000), POLICIES (3), RUNS (30), WARMUP (3), CALLS (300: in-process calls), REFRESH_RUNS (20).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PEOPLE=${PEOPLE:-10000}
POLICIES=${POLICIES:-3}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
CALLS=${CALLS:-300}
REFRESH_RUNS=${REFRESH_RUNS:-20}
VENV=${B2C_BENCH_MSAL_VENV:-$ROOT/.build-bench/venv-msal}

need hyperfine sqlite3 curl "$PY"
bench_init
bench_build

if [[ ! -x $VENV/bin/python ]] || ! "$VENV/bin/python" -c 'import msal' 2>/dev/null; then
    note "making $VENV with msal from PyPI…"
    "$PY" -m venv "$VENV" >&2 || die "cannot make a venv (Debian: apt-get install python3-venv)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check 'msal>=1,<2' >&2 || die "pip could not install msal"
fi
msal_version=$("$VENV/bin/python" -c 'import msal; print(msal.__version__)')

signed_in_store "$POLICIES"
"$PY" "$BENCH_DIR/seed_store.py" "$store" --people "$PEOPLE" --policies "$policies" 2>"$BENCH_TMP/seed.log"
accounts=$(sqlite3 "$store" "SELECT count(*) FROM accounts")

export B2C_CONFIG=$EMU_CONFIG B2C_HOME=$home
policy=$(cut -d, -f1 <<<"$policies")
account_id=$(sqlite3 "$store" "SELECT account_id FROM current_accounts WHERE policy = '$policy'")
cache=$BENCH_TMP/msal_token_cache.json
"$B2C" export --format msal --out "$cache" 2>"$BENCH_TMP/export.log" || { cat "$BENCH_TMP/export.log" >&2; die "b2c export failed"; }
cache_mb=$(awk -v b="$(stat -c %s "$cache")" 'BEGIN { printf "%.1f", b / 1048576 }')
read -r client_id tenant scope < <("$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["clientId"], c["tenant"]["name"], c["apis"][0]["scopes"][0])' "$EMU_CONFIG")
authority=$EMU_BASE/$tenant/$policy
export REQUESTS_CA_BUNDLE=$EMU_CA

[[ $("$B2C" token --format json | json_field fromCache) == true ]] || die "b2c token was not a cache hit"
msal=("$VENV/bin/python" "$BENCH_DIR/peer_msal.py")
peer_args=("$cache" "$authority" "$client_id" "$scope" "$account_id")
"${msal[@]}" once "${peer_args[@]}" || die "msal-python did not serve the exported token from its cache"

json=$BENCH_TMP/peers.json
run_hyperfine "$json" "$RUNS" "$WARMUP" "$B2C token" "${msal[*]} once ${peer_args[*]}"
t_b2c=$(p50_ms "$json" 0)
t_msal=$(p50_ms "$json" 1)
read -r _ t_warm _ t_warm99 _ _ < <("${msal[@]}" warm "${peer_args[@]}" "$CALLS")
lib_out=$("$TOOL" library-silent --calls "$((CALLS * 10))") || die "b2c-bench library-silent failed: $lib_out"
read -r _ _ lib_calls _ t_lib _ t_lib99 <<<"$lib_out"

json_r=$BENCH_TMP/peers-refresh.json
run_hyperfine "$json_r" "$REFRESH_RUNS" 2 "$B2C token --force-refresh" "${msal[*]} once-refresh ${peer_args[*]}"
r_b2c=$(p50_ms "$json_r" 0)
r_msal=$(p50_ms "$json_r" 1)
read -r _ r_warm _ r_warm99 _ _ < <("${msal[@]}" warm-refresh "${peer_args[@]}" "$REFRESH_RUNS")

machine_line
say "content: $PEOPLE people x $POLICIES policies = $accounts accounts; MSAL cache export $cache_mb MB; msal-python $msal_version"
printf 'cache hit: b2c token (process) p50: %.2f ms  peer msal-python whole process p50: %.2f ms  ratio %sx  target <= 1x  %s\n' \
    "$t_b2c" "$t_msal" "$(ratio "$t_b2c" "$t_msal")" "$(verdict "$(ratio "$t_b2c" "$t_msal")" 1 le)"
printf 'cache hit: b2c token (process) p50: %.2f ms  peer msal-python warm in-process call p50: %.3f ms (p99 %.3f ms)  ratio %sx  (for scale)\n' \
    "$t_b2c" "$t_warm" "$t_warm99" "$(ratio "$t_b2c" "$t_warm")"
printf 'library cache hit: B2CKit acquireTokenSilently in process p50: %.4f ms (p99 %.4f ms, %d calls)  peer msal-python warm in-process p50: %.3f ms (p99 %.3f ms)  %sx faster  target >= 20x  %s\n' \
    "$t_lib" "$t_lib99" "$lib_calls" "$t_warm" "$t_warm99" "$(ratio "$t_warm" "$t_lib")" "$(verdict "$(ratio "$t_warm" "$t_lib")" 20 ge)"
printf 'refresh: b2c token --force-refresh (process) p50: %.2f ms  peer msal-python whole process p50: %.2f ms  ratio %sx  target <= 1x  %s\n' \
    "$r_b2c" "$r_msal" "$(ratio "$r_b2c" "$r_msal")" "$(verdict "$(ratio "$r_b2c" "$r_msal")" 1 le)"
printf 'refresh: b2c token --force-refresh (process) p50: %.2f ms  peer msal-python warm in-process refresh p50: %.2f ms (p99 %.2f ms)  ratio %sx  (for scale)\n' \
    "$r_b2c" "$r_warm" "$r_warm99" "$(ratio "$r_b2c" "$r_warm")"
exit 0
