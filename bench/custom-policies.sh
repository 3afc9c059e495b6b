#!/usr/bin/env bash
# Benchmark: custom policies (the Identity Experience Framework's XML) against a user flow, in one run, one emulator.
#
#   load:    `serve --custom-policies DIR --verbose` reports how long reading and checking the folder took (every file
#            parsed, the chains merged, B2C's upload checks); median of RUNS starts.      target <= 100 ms
#   refresh: wrk POSTing the same refresh grant at B2C_1A_signup_signin (its relying party's Token journey runs: the
#            directory read, the revocation check, the relying party's claims) and at the user flow B2C_1_susi, in
#            alternating slices; ratio custom / user flow.                                target >= 0.80
#   walk:    a sign-in page walk by the scripted browser (`b2c signin` through every page, over HTTPS), median of RUNS
#            for each, alternating; ratio custom / user flow.                             target <= 1.5
#
# The folder: POLICIES (default: the example set `b2c emulator example-policies` writes — a base, extensions and four
# relying parties). To measure Microsoft's starter pack, fill its placeholders (docs/emulator.md, "Custom policies") and
# point POLICIES at the folder; its relying party is then B2C_1A_signup_signin as well.
# Knobs: RUNS (5), DURATION (10 s of refresh load per policy), SLICES (5), CONNECTIONS (16), THREADS (1), PROFILE (0; 1
# samples the emulator with perf for 4 s of the custom policy's refresh load after the slices and prints its hottest
# symbols: where a custom policy's refresh spends what a user flow's does not).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-5}
DURATION=${DURATION:-10}
SLICES=${SLICES:-5}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
USER_FLOW=B2C_1_susi
CUSTOM=B2C_1A_signup_signin

need wrk curl sqlite3 "$PY"
bench_init
bench_build
machine_line
(( DURATION % SLICES == 0 )) || die "DURATION ($DURATION) must be a multiple of SLICES ($SLICES)"
slice=$(( DURATION / SLICES ))
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

policies=${POLICIES:-}
if [[ -z $policies ]]; then
    policies=$BENCH_TMP/policies
    "$EMULATOR" example-policies "$policies" >/dev/null || die "b2c-emulator example-policies failed"
fi
files=$(find "$policies" -maxdepth 1 -name '*.xml' | wc -l)

# Load.
loads=()
for ((i = 0; i < RUNS; i++)); do
    start_emulator "load-$i" memory --custom-policies "$policies" --verbose
    ms=$(sed -n 's/.*read and checked in \([0-9.]*\) ms.*/\1/p' "$EMU_DIR/emulator.err")
    stop_emulator
    [[ -n $ms ]] || { cat "$EMU_DIR/emulator.err" >&2; die "the emulator did not say how long the load took"; }
    loads+=("$ms")
done
load=$(printf '%s\n' "${loads[@]}" | median)
printf 'load of %d policy files (%s): median %s ms of %d starts (%s)  target <= 100 ms  %s\n' \
    "$files" "$policies" "$load" "$RUNS" "$(IFS=' '; echo "${loads[*]}")" "$(verdict "$load" 100 le)"

# Refresh and page walk, on one emulator with file state (as `serve --state` runs).
start_emulator emulator file --custom-policies "$policies"
walks_user=() walks_custom=()
for ((i = 0; i < RUNS; i++)); do
    for policy in "$USER_FLOW" "$CUSTOM"; do
        home=$BENCH_TMP/home-walk-$policy-$i
        t0=$(date +%s%N)
        agent_signin "$home" alice@contoso.com 'Alice-dev-2026!' "$policy"
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        if [[ $policy == "$USER_FLOW" ]]; then walks_user+=("$ms"); else walks_custom+=("$ms"); fi
    done
done
walk_user=$(printf '%s\n' "${walks_user[@]}" | median)
walk_custom=$(printf '%s\n' "${walks_custom[@]}" | median)
walk_ratio=$(ratio "$walk_custom" "$walk_user")
printf 'sign-in page walk (b2c signin + scripted browser, HTTPS): %s %s ms, %s %s ms (medians of %d)  ratio %s  target <= 1.5  %s\n' \
    "$CUSTOM" "$walk_custom" "$USER_FLOW" "$walk_user" "$RUNS" "$walk_ratio" "$(verdict "$walk_ratio" 1.5 le)"

declare -A answered duration
for policy in "$USER_FLOW" "$CUSTOM"; do
    home=$BENCH_TMP/home-walk-$policy-0
    make_refresh_form "$home/store.sqlite" "$policy" "$BENCH_TMP/refresh-$policy.form"
    url=$(token_endpoint "$policy")
    echo "$url" >"$BENCH_TMP/url-$policy"
    status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$EMU_CA" --data-binary @"$BENCH_TMP/refresh-$policy.form" "$url")
    [[ $status == 200 ]] || die "the refresh grant of $policy answered HTTP $status"
    B2C_BENCH_FORM=$BENCH_TMP/refresh-$policy.form wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s "$BENCH_DIR/refresh-grant.lua" "$url" \
        >/dev/null 2>&1 || true
    answered[$policy]=0 duration[$policy]=0
done
for ((i = 0; i < SLICES; i++)); do
    for policy in "$USER_FLOW" "$CUSTOM"; do
        out=$BENCH_TMP/wrk-$policy-$i.txt
        B2C_BENCH_FORM=$BENCH_TMP/refresh-$policy.form wrk -t"$THREADS" -c"$CONNECTIONS" -d"${slice}s" -s "$BENCH_DIR/refresh-grant.lua" \
            "$(cat "$BENCH_TMP/url-$policy")" >"$out" 2>&1 || { cat "$out" >&2; die "wrk failed"; }
        summary=$(wrk_summary "$out")
        read -r a n e _ _ d <<<"$summary"
        [[ $n == 0 && $e == 0 ]] || die "$policy: $n non-200 answers, $e socket errors in slice $i"
        answered[$policy]=$(( answered[$policy] + a )) duration[$policy]=$(( duration[$policy] + d ))
    done
done
if [[ ${PROFILE:-0} == 1 ]] && command -v perf >/dev/null 2>&1; then
    B2C_BENCH_FORM=$BENCH_TMP/refresh-$CUSTOM.form wrk -t"$THREADS" -c"$CONNECTIONS" -d7s -s "$BENCH_DIR/refresh-grant.lua" \
        "$(cat "$BENCH_TMP/url-$CUSTOM")" >/dev/null 2>&1 &
    load=$!
    sleep 2
    perf record -F 999 -p "$EMU_PID" -o "$BENCH_TMP/perf.data" -- sleep 4 >/dev/null 2>&1 || note "perf record did not work"
    wait "$load" || true
    say "profile of $CUSTOM's refresh load (self time, hottest symbols):"
    perf report -i "$BENCH_TMP/perf.data" --no-children --sort symbol --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' \
        | sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//' | head -25
fi
stop_emulator
rps() { awk -v a="${answered[$1]}" -v d="${duration[$1]}" 'BEGIN { printf "%.1f", a / (d / 1e6) }'; }
rps_user=$(rps "$USER_FLOW") rps_custom=$(rps "$CUSTOM")
refresh_ratio=$(ratio "$rps_custom" "$rps_user")
printf 'refresh grants/s (%d connections, %d alternating slices of %d s, file state): %s %s/s, %s %s/s  ratio %s  target >= 0.80  %s\n' \
    "$CONNECTIONS" "$SLICES" "$slice" "$CUSTOM" "$rps_custom" "$USER_FLOW" "$rps_user" "$refresh_ratio" "$(verdict "$refresh_ratio" 0.80 ge)"
exit 0
