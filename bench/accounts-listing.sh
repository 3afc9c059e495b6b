#!/usr/bin/env bash
# Benchmark 3: listing, `b2c accounts --policy B2C_1_susi --output json`, at SIZES people (each with POLICIES policies).
#
#   figure: p50 at each size, and how it grows with the output: the log-log slope of time against output bytes
#           between consecutive sizes (1.0 = linear; 2.0 = quadratic)
#   floor:  `sqlite3 -json <store> "<the same rows>"`: people joined to their accounts under the policy, with the
#           current flag, the refresh-token flag and the access tokens, in the same order, as JSON
#   target: near-linear in the output: slope <= 1.15 between the two largest sizes (the floor's slope is shown beside it)
#
# Seeding: one real sign-in through the emulator (see token-cache-hit.sh), then bench/seed_store.py per size.
#
# Knobs: SIZES ("1000 10000 100000"), POLICIES (3), RUNS (10; runs at sizes >= 50000: RUNS_BIG, 3), WARMUP (1).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES=${SIZES:-1000 10000 100000}
POLICIES=${POLICIES:-3}
RUNS=${RUNS:-10}
RUNS_BIG=${RUNS_BIG:-3}
WARMUP=${WARMUP:-1}
POLICY=B2C_1_susi

need hyperfine sqlite3 curl "$PY"
[[ -x /usr/bin/time ]] || die "needs GNU time at /usr/bin/time (Debian: apt-get install time)"
bench_init
bench_build

start_emulator emulator file
template=$BENCH_TMP/template
agent_signin "$template" alice@contoso.com 'Alice-dev-2026!' "$POLICY"
stop_emulator
policies=$(config_policies "$EMU_CONFIG" "$POLICIES")
export B2C_CONFIG=$EMU_CONFIG

floor_sql="SELECT i.tenant_id, i.oid, i.name, i.given_name, i.family_name, i.email, a.account_id, a.policy,
  c.account_id IS NOT NULL AS current, r.account_id IS NOT NULL AS refresh_token,
  t.target AS scopes, t.expires_on, max(0, t.expires_on - CAST(strftime('%s','now') AS INTEGER)) AS expires_in
FROM identities i JOIN accounts a ON a.tenant_id = i.tenant_id AND a.oid = i.oid
LEFT JOIN current_accounts c ON c.account_id = a.account_id
LEFT JOIN refresh_tokens r ON r.account_id = a.account_id
LEFT JOIN access_tokens t ON t.account_id = a.account_id
WHERE a.policy = '$POLICY' COLLATE NOCASE ORDER BY i.email, i.oid, a.account_id"
floor_sql=$(tr '\n' ' ' <<<"$floor_sql")

sizes=() times=() floors=() bytes=() fbytes=()
for n in $SIZES; do
    home=$BENCH_TMP/home-$n
    mkdir -m 700 "$home"
    "$PY" "$BENCH_DIR/seed_store.py" "$home/store.sqlite" --copy-from "$template/store.sqlite" --people "$n" --policies "$policies" \
        2>"$BENCH_TMP/seed-$n.log"
    export B2C_HOME=$home
    # One checked run: exit 0, n people in the output, its size and the peak RSS.
    out=$BENCH_TMP/accounts-$n.json
    /usr/bin/time -v "$B2C" accounts --policy "$POLICY" --output json >"$out" 2>"$BENCH_TMP/time-$n.txt" \
        || { cat "$BENCH_TMP/time-$n.txt" >&2; die "b2c accounts failed at $n people"; }
    people=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["people"]))' "$out")
    [[ $people == "$n" ]] || die "b2c accounts listed $people people, expected $n"
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$BENCH_TMP/time-$n.txt")
    out_bytes=$(wc -c <"$out")
    floor_bytes=$(sqlite3 -init /dev/null -json "$home/store.sqlite" "$floor_sql" 2>/dev/null | wc -c)
    rm -f "$out"
    runs=$RUNS
    ((n >= 50000)) && runs=$RUNS_BIG
    json=$BENCH_TMP/accounts-$n.hyperfine.json
    run_hyperfine "$json" "$runs" "$WARMUP" \
        "$B2C accounts --policy $POLICY --output json" \
        "sqlite3 -init /dev/null -json $home/store.sqlite \"$floor_sql\""
    t=$(p50_ms "$json" 0)
    f=$(p50_ms "$json" 1)
    sizes+=("$n") times+=("$t") floors+=("$f") bytes+=("$out_bytes") fbytes+=("$floor_bytes")
    printf 'accounts --output json, %6d people: p50 %9.2f ms  floor (sqlite3 -json, same rows) p50 %8.2f ms  ratio %6sx  output %s bytes (floor %s)  peak RSS %.1f MB  runs %d\n' \
        "$n" "$t" "$f" "$(ratio "$t" "$f")" "$out_bytes" "$floor_bytes" "$(awk -v k="$rss_kb" 'BEGIN{print k/1024}')" "$runs"
    rm -f "$home"/store.sqlite*
done

slope() { awk -v t1="$1" -v t2="$2" -v b1="$3" -v b2="$4" 'BEGIN { printf "%.2f", log(t2 / t1) / log(b2 / b1) }'; }
last=$((${#sizes[@]} - 1))
for ((i = 1; i <= last; i++)); do
    s=$(slope "${times[i - 1]}" "${times[i]}" "${bytes[i - 1]}" "${bytes[i]}")
    fs=$(slope "${floors[i - 1]}" "${floors[i]}" "${fbytes[i - 1]}" "${fbytes[i]}")
    printf 'growth %d -> %d people: time x%s for output x%s: slope %s (floor slope %s)\n' "${sizes[i - 1]}" "${sizes[i]}" \
        "$(ratio "${times[i]}" "${times[i - 1]}")" "$(ratio "${bytes[i]}" "${bytes[i - 1]}")" "$s" "$fs"
done
if ((last >= 1)); then
    s=$(slope "${times[last - 1]}" "${times[last]}" "${bytes[last - 1]}" "${bytes[last]}")
    fs=$(slope "${floors[last - 1]}" "${floors[last]}" "${fbytes[last - 1]}" "${fbytes[last]}")
    limit=1.15
    printf 'accounts listing growth (%d -> %d people): slope %s  floor slope %s  target <= %s (near-linear)  %s\n' \
        "${sizes[last - 1]}" "${sizes[last]}" "$s" "$fs" "$limit" "$(verdict "$s" "$limit" le)"
    printf 'accounts listing p50 at %d people: %.2f ms  floor %.2f ms  ratio %sx (no ratio target; reported)\n' \
        "${sizes[last]}" "${times[last]}" "${floors[last]}" "$(ratio "${times[last]}" "${floors[last]}")"
fi
exit 0
