#!/usr/bin/env bash
# Benchmark 1: silent token, cache hit, on a store with PEOPLE people x POLICIES policies.
#
#   figure: `b2c token` (release build; default policy = the signUpSignIn one, its current account, the first API's scopes)
#           on the store encrypted with the key from B2C_STORE_KEY: a repeated cache hit, which b2c's fast path answers
#           (checked with B2C_FAST_PATH=require); beside it the same with the store in plaintext, and the full client
#           (`b2c-client token`, what answers every other command) on the same store
#   floor:  `sqlite3 <store> "<the same primary-key lookup of the access token>"` (one process, one indexed query)
#   target: p50 <= 1.5x the floor; peak RSS <= 10 MB
#
# Seeding: one real person (alice) signs in through the emulator with the scripted browser, so that b2c creates the
# store and writes a real account; bench/seed_store.py then adds synthetic people modelled on that row. The emulator is
# stopped before measuring: a cache hit must not touch the network (a miss would fail, which the script checks).
#
# Knobs: PEOPLE (10000), POLICIES (3), RUNS (100), WARMUP (5), RSS_RUNS (5).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PEOPLE=${PEOPLE:-10000}
POLICIES=${POLICIES:-3}
RUNS=${RUNS:-100}
WARMUP=${WARMUP:-5}
RSS_RUNS=${RSS_RUNS:-5}

need hyperfine sqlite3 curl "$PY"
[[ -x /usr/bin/time ]] || die "needs GNU time at /usr/bin/time (Debian: apt-get install time)"
bench_init
bench_build

signed_in_store "$POLICIES"
stop_emulator

# A one-person store (same real account, current for every policy) to separate the fixed cost from the store size.
small=$BENCH_TMP/home-small
mkdir -m 700 "$small"
"$PY" "$BENCH_DIR/seed_store.py" "$small/store.sqlite" --copy-from "$store" --people 1 --policies "$policies" 2>/dev/null
"$PY" "$BENCH_DIR/seed_store.py" "$store" --people "$PEOPLE" --policies "$policies" 2>"$BENCH_TMP/seed.log"
accounts=$(sqlite3 "$store" "SELECT count(*) FROM accounts")

# The measured store is encrypted with a key from B2C_STORE_KEY (a copy stays in plaintext for the second figure).
plain_home=$BENCH_TMP/home-plain
cp -r "$home" "$plain_home"
B2C_STORE_KEY=$(head -c 32 /dev/urandom | base64)
export B2C_STORE_KEY
B2C_HOME=$home B2C_CONFIG=$EMU_CONFIG "$B2C" config set storage encrypted >/dev/null || die "cannot encrypt $store"
export B2C_CONFIG=$EMU_CONFIG B2C_HOME=$home
default_policy=$(cut -d, -f1 <<<"$policies")
target=$(default_target "$EMU_CONFIG")
account_id=$(sqlite3 "$store" "SELECT account_id FROM current_accounts WHERE policy = '$default_policy'")

# The measured command must be a cache hit for the account the floor reads.
answer=$("$B2C" token --format json)
from_cache=$(json_field fromCache <<<"$answer")
answered_account=$(json_field accountId <<<"$answer")
[[ $from_cache == true ]] || die "b2c token was not a cache hit (fromCache: $from_cache)"
[[ $answered_account == "$account_id" ]] || die "b2c token chose $answered_account, the floor reads $account_id"
# The full client files its answer; from then on b2c answers the same command itself.
"$B2C" token >/dev/null
B2C_FAST_PATH=require "$B2C" token >/dev/null || die "b2c's fast path did not answer a repeated cache hit"
B2C_HOME=$plain_home B2C_STORE_KEY= "$B2C" token >/dev/null
B2C_HOME=$plain_home B2C_STORE_KEY= B2C_FAST_PATH=require "$B2C" token >/dev/null || die "the fast path did not answer (plaintext)"

now_sql="CAST(strftime('%s','now') AS INTEGER)"
environment=$(sqlite3 "$store" "SELECT environment FROM current_accounts WHERE policy = '$default_policy'")
client_id=$(sqlite3 "$store" "SELECT client_id FROM current_accounts WHERE policy = '$default_policy'")
key="environment = '$environment' AND client_id = '$client_id'"
floor_sql="SELECT secret FROM access_tokens WHERE $key AND account_id = '$account_id' AND target = '$target' AND expires_on - $now_sql >= 300"
full_sql="SELECT t.secret FROM current_accounts c JOIN accounts a ON a.environment = c.environment AND a.client_id = c.client_id AND a.account_id = c.account_id JOIN access_tokens t ON t.environment = a.environment AND t.client_id = a.client_id AND t.account_id = a.account_id AND t.target = '$target' WHERE c.environment = '$environment' AND c.client_id = '$client_id' AND c.policy = '$default_policy' AND t.expires_on - $now_sql >= 300"
for sql in "$floor_sql" "$full_sql"; do
    # (counted, not printed: the secret is ciphertext, whose bytes may hold newlines)
    [[ $(sqlite3 -init /dev/null "$store" "SELECT count(*) FROM ($sql)" 2>/dev/null) == 1 ]] || die "the floor query does not return exactly one token"
done
plan=$(sqlite3 -init /dev/null "$store" "EXPLAIN QUERY PLAN $floor_sql" 2>/dev/null | sed -n 's/.*\(SEARCH .*\)/\1/p' | head -1)

json=$BENCH_TMP/token.json
run_hyperfine "$json" "$RUNS" "$WARMUP" \
    "$B2C token" \
    "sqlite3 -init /dev/null $store \"$floor_sql\"" \
    "sqlite3 -init /dev/null $store \"$full_sql\"" \
    "$B2C --help" \
    "$BIN/b2c-client token"
t_token=$(p50_ms "$json" 0)
t_floor=$(p50_ms "$json" 1)
t_full=$(p50_ms "$json" 2)
t_help=$(p50_ms "$json" 3)
t_client=$(p50_ms "$json" 4)
# The plaintext copy in a run of its own, its variables set for hyperfine (an `env` in the command would add an exec).
json_plain=$BENCH_TMP/token-plain.json
B2C_HOME=$plain_home B2C_STORE_KEY= run_hyperfine "$json_plain" "$RUNS" "$WARMUP" "$B2C token" \
    "sqlite3 -init /dev/null $store \"$floor_sql\""
t_plain=$(p50_ms "$json_plain" 0)
t_plain_floor=$(p50_ms "$json_plain" 1)

json_small=$BENCH_TMP/token-small.json
B2C_HOME=$small B2C_STORE_KEY= "$B2C" token >/dev/null
B2C_HOME=$small B2C_STORE_KEY= run_hyperfine "$json_small" "$RUNS" "$WARMUP" "$B2C token"
t_small=$(p50_ms "$json_small" 0)

rss=$(peak_rss_mb "$RSS_RUNS" "$B2C" token)
rss_floor=$(peak_rss_mb "$RSS_RUNS" sqlite3 -init /dev/null "$store" "$floor_sql")

# The same binary as a fresh copy: a file just written sits in the page cache in large folios, which the kernel maps
# more of per fault (fewer faults, more resident pages). The figures above are for the binary read back from disk.
copy=$BENCH_TMP/b2c-fresh-copy
cp "$B2C" "$copy"
json_copy=$BENCH_TMP/token-copy.json
run_hyperfine "$json_copy" "$RUNS" "$WARMUP" "$copy token"
t_copy=$(p50_ms "$json_copy" 0)
rss_copy=$(peak_rss_mb "$RSS_RUNS" "$copy" token)

say "store: $PEOPLE people x $POLICIES policies ($policies) = $accounts accounts; b2c token selects the current account of $default_policy (fromCache: true)"
say "floor query plan: $plan"
report_ratio "token cache hit" "$t_token" "sqlite3 PK lookup" "$t_floor" 1.5
report_ratio "token cache hit" "$t_token" "sqlite3 current account -> account -> token" "$t_full" 1.5
report_ratio "token cache hit, store in plaintext" "$t_plain" "sqlite3 PK lookup, same run" "$t_plain_floor" 1.5
printf 'token cache hit peak RSS: %s MB  floor (sqlite3) peak RSS: %s MB  ratio %sx  target <= 10 MB  %s\n' \
    "$rss" "$rss_floor" "$(ratio "$rss" "$rss_floor")" "$(verdict "$rss" 10 le)"
printf 'the full client (b2c-client token, same store and answer) p50: %.2f ms (%sx the floor): what the fast path saves\n' \
    "$t_client" "$(ratio "$t_client" "$t_floor")"
printf 'the same binary freshly copied (page cache in large folios): p50 %.2f ms (%sx the floor), peak RSS %s MB\n' \
    "$t_copy" "$(ratio "$t_copy" "$t_floor")" "$rss_copy"
say "where the time goes (p50, ratio to the sqlite3 floor):"
printf '  b2c --help (hands over to b2c-client: two starts): %7.2f ms  %5.2fx\n' "$t_help" "$(ratio "$t_help" "$t_floor")"
printf '  b2c token, 1-person store (plaintext):            %7.2f ms  %5.2fx\n' "$t_small" "$(ratio "$t_small" "$t_floor")"
printf '  b2c token, %6d-account store:                  %7.2f ms  %5.2fx\n' "$accounts" "$t_token" "$(ratio "$t_token" "$t_floor")"
exit 0
