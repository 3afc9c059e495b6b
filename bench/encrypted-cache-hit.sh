#!/usr/bin/env bash
# Benchmark: the token cache hit with an encrypted store, per key source, against the plaintext cache hit in the same run.
#
#   figures: `b2c token` (release build), cache hit, on copies of one store of PEOPLE people x POLICIES policies:
#            encrypted with B2C_STORE_KEY; encrypted with a key in the Secret Service (gnome-keyring on a private session
#            bus) with the key cached in the kernel keyring (every command but the first after `b2c config lock`);
#            the same without the cache (`b2c config lock` before each run: a D-Bus round trip per command)
#   peer:    the same `b2c token` on the plaintext copy
#   target:  <= 1.15x the plaintext cache hit with a cached key (B2C_STORE_KEY, kernel keyring)
#
# Knobs: PEOPLE (1000), POLICIES (3), RUNS (100), WARMUP (5).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PEOPLE=${PEOPLE:-1000}
POLICIES=${POLICIES:-3}
RUNS=${RUNS:-100}
WARMUP=${WARMUP:-5}

need hyperfine sqlite3 "$PY" dbus-run-session gnome-keyring-daemon
bench_init
bench_build

start_emulator emulator file
plain=$BENCH_TMP/plain
agent_signin "$plain" alice@contoso.com 'Alice-dev-2026!' B2C_1_susi
stop_emulator
policies=$(config_policies "$EMU_CONFIG" "$POLICIES")
"$PY" "$BENCH_DIR/seed_store.py" "$plain/store.sqlite" --people "$PEOPLE" --policies "$policies" 2>"$BENCH_TMP/seed.log"

# Copies: one encrypted with B2C_STORE_KEY, one with a key in the Secret Service (made inside the session below).
export B2C_CONFIG=$EMU_CONFIG
env_store=$BENCH_TMP/env && cp -r "$plain" "$env_store"
key=$(head -c 32 /dev/urandom | base64)
B2C_HOME=$env_store B2C_STORE_KEY=$key "$B2C" config set storage encrypted >/dev/null
keyring_store=$BENCH_TMP/keyring && cp -r "$plain" "$keyring_store"
json=$BENCH_TMP/encrypted.json
mkdir -p "$BENCH_TMP/runtime" && chmod 700 "$BENCH_TMP/runtime"
export BENCH_TMP B2C key plain env_store keyring_store json RUNS WARMUP
HOME=$BENCH_TMP XDG_RUNTIME_DIR=$BENCH_TMP/runtime XDG_DATA_HOME=$BENCH_TMP/data dbus-run-session -- bash -c '
    set -e
    printf %s bench | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
    B2C_HOME=$keyring_store "$B2C" config set storage encrypted >/dev/null
    # (a key is given only for the store encrypted with it: b2c refuses a plaintext store while a key is given)
    for store in "$plain" "$env_store" "$keyring_store"; do
        given=
        [[ $store == "$env_store" ]] && given=$key
        B2C_HOME=$store B2C_STORE_KEY=$given "$B2C" token --format json | grep -q "\"fromCache\" : true\|\"fromCache\": true" \
            || { echo "bench: not a cache hit in $store" >&2; exit 1; }
        # The full client has filed its answer: from here on b2c answers the same command itself.
        B2C_HOME=$store B2C_STORE_KEY=$given "$B2C" token >/dev/null
        B2C_HOME=$store B2C_STORE_KEY=$given B2C_FAST_PATH=require "$B2C" token >/dev/null \
            || { echo "bench: the fast path did not answer in $store" >&2; exit 1; }
    done
    hyperfine -N --style none --runs "$RUNS" --warmup "$WARMUP" --export-json "$json" \
        --prepare "true" --prepare "true" --prepare "true" --prepare "env B2C_HOME=$keyring_store $B2C config lock" \
        "env B2C_HOME=$plain $B2C token" \
        "env B2C_HOME=$env_store B2C_STORE_KEY=$key $B2C token" \
        "env B2C_HOME=$keyring_store $B2C token" \
        "env B2C_HOME=$keyring_store $B2C token" >"$json.log" 2>&1 || { cat "$json.log" >&2; exit 1; }
' 2>&1 | grep -v "Failed to set fd limit" || true
[[ -s $json ]] || die "the measurement failed"
t_plain=$(p50_ms "$json" 0)
t_env=$(p50_ms "$json" 1)
t_cached=$(p50_ms "$json" 2)
t_uncached=$(p50_ms "$json" 3)
accounts=$(sqlite3 "$plain/store.sqlite" "SELECT count(*) FROM accounts")
say "store: $accounts accounts; every figure a cache hit of the same account (fromCache: true), the emulator stopped"
report_ratio "encrypted cache hit, key from B2C_STORE_KEY" "$t_env" "plaintext cache hit" "$t_plain" 1.15
report_ratio "encrypted cache hit, Secret Service key cached in the kernel keyring" "$t_cached" "plaintext cache hit" "$t_plain" 1.15
printf 'encrypted cache hit, Secret Service key, no cache (a D-Bus round trip each): p50 %.2f ms, %sx the plaintext cache hit (no target)\n' \
    "$t_uncached" "$(ratio "$t_uncached" "$t_plain")"
exit 0
