#!/usr/bin/env bash
# Where the time of a `b2c token` cache hit goes when the store is small: process start (dynamic loading of the Swift
# runtime and Foundation), our own initialisation, and the store. Diagnostic companion of token-cache-hit.sh.
#
#   - p50 of: /bin/true, the sqlite3 floor, a Swift "hello" with and without Foundation (dynamic and -static-stdlib,
#     compiled here with swiftc), `b2c --help`, `b2c token` (1-person store), and the same b2c commands of the other
#     link flavour when it is built (ALT_BIN: the dynamic build in <repo>/.build-release/release when the measured one
#     is the static default, and the other way round with B2C_BENCH_DYNAMIC=1; ALT=1 builds it)
#   - shared objects mapped, dynamic-loader time and relocations (LD_DEBUG=statistics)
#   - system calls of a cache hit (strace -f -c), and proof that it opens no socket (no network, no discovery)
#   - software counters (perf stat: task-clock, page-faults, context switches) when perf works
#
# Knobs: RUNS (100), WARMUP (5), ALT (0), ALT_BIN.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-100}
WARMUP=${WARMUP:-5}
ALT=${ALT:-0}
if [[ ${B2C_BENCH_DYNAMIC:-0} == 1 ]]; then
    source "$ROOT/scripts/release-flags.sh"
    LABEL=dynamic ALT_LABEL=static ALT_SCRATCH=$ROOT/.build-release-static ALT_FLAGS=("${RELEASE_FLAGS[@]}")
else
    LABEL=static ALT_LABEL=dynamic ALT_SCRATCH=$ROOT/.build-release ALT_FLAGS=()
fi
ALT_BIN=${ALT_BIN:-$ALT_SCRATCH/release}

need hyperfine sqlite3 strace curl "$PY"
bench_init
bench_build
if [[ $ALT == 1 ]]; then
    note "building the $ALT_LABEL variant in $ALT_SCRATCH…"
    (cd "$ROOT" && nice -n 10 swift build -c release ${ALT_FLAGS[@]+"${ALT_FLAGS[@]}"} --scratch-path "$ALT_SCRATCH" >"$BENCH_TMP/build-alt.log" 2>&1) \
        || { tail -30 "$BENCH_TMP/build-alt.log" >&2; die "the $ALT_LABEL build failed"; }
fi

start_emulator emulator file
home=$BENCH_TMP/home
agent_signin "$home" alice@contoso.com 'Alice-dev-2026!' B2C_1_susi
stop_emulator
export B2C_CONFIG=$EMU_CONFIG B2C_HOME=$home
store=$home/store.sqlite
account_id=$(sqlite3 "$store" "SELECT account_id FROM current_accounts WHERE policy = 'B2C_1_susi'")
target=$(default_target "$EMU_CONFIG")
environment=$(sqlite3 "$store" "SELECT environment FROM current_accounts WHERE account_id = '$account_id' LIMIT 1")
client_id=$(sqlite3 "$store" "SELECT client_id FROM current_accounts WHERE account_id = '$account_id' LIMIT 1")
floor_sql="SELECT secret FROM access_tokens WHERE environment = '$environment' AND client_id = '$client_id' AND account_id = '$account_id' AND target = '$target' AND expires_on - CAST(strftime('%s','now') AS INTEGER) >= 300"
[[ $("$B2C" token --format json | json_field fromCache) == true ]] || die "b2c token was not a cache hit"

machine_line

# Swift "hello" programs: the cost of the runtime and of Foundation alone, dynamic and static.
hello=()
if command -v swiftc >/dev/null 2>&1; then
    mkdir -p "$BENCH_TMP/hello"
    printf 'print("hello")\n' >"$BENCH_TMP/hello/plain.swift"
    printf 'import Foundation\nprint(ProcessInfo.processInfo.environment["HOME"] ?? "", URL(fileURLWithPath: "/").path)\n' >"$BENCH_TMP/hello/foundation.swift"
    for kind in plain foundation; do
        swiftc -O "$BENCH_TMP/hello/$kind.swift" -o "$BENCH_TMP/hello/$kind-dynamic" 2>/dev/null
        swiftc -O -static-stdlib "$BENCH_TMP/hello/$kind.swift" -o "$BENCH_TMP/hello/$kind-static" 2>/dev/null
        hello+=("$BENCH_TMP/hello/$kind-dynamic" "$BENCH_TMP/hello/$kind-static")
    done
fi

cmds=(/bin/true "sqlite3 -init /dev/null $store \"$floor_sql\"" "${hello[@]}" "$B2C --help" "$B2C token")
labels=("/bin/true" "sqlite3 floor (PK lookup)")
for h in "${hello[@]}"; do labels+=("swift hello: $(basename "$h")"); done
labels+=("$LABEL b2c --help" "$LABEL b2c token (1-person store)")
if [[ -x $ALT_BIN/b2c ]]; then
    cmds+=("$ALT_BIN/b2c --help" "$ALT_BIN/b2c token")
    labels+=("$ALT_LABEL b2c --help" "$ALT_LABEL b2c token (1-person store)")
fi
json=$BENCH_TMP/startup.json
run_hyperfine "$json" "$RUNS" "$WARMUP" "${cmds[@]}"
floor=$(p50_ms "$json" 1)
say "p50, and ratio to the sqlite3 floor:"
for i in "${!labels[@]}"; do
    t=$(p50_ms "$json" "$i")
    printf '  %-40s %8.2f ms  %6sx\n' "${labels[$i]}" "$t" "$(ratio "$t" "$floor")"
done

if [[ -x $ALT_BIN/b2c ]]; then
    printf '  peak RSS b2c token: %s %s MB, %s %s MB; binary size: %s %s MB, %s %s MB\n' \
        "$LABEL" "$(peak_rss_mb 3 "$B2C" token)" "$ALT_LABEL" "$(peak_rss_mb 3 "$ALT_BIN/b2c" token)" \
        "$LABEL" "$(awk -v b="$(stat -c %s "$B2C")" 'BEGIN{printf "%.1f", b/1048576}')" \
        "$ALT_LABEL" "$(awk -v b="$(stat -c %s "$ALT_BIN/b2c")" 'BEGIN{printf "%.1f", b/1048576}')"
fi

say "loading ($LABEL b2c token):"
# (ldd fails on a static executable, which the fast path is in a release build: then there is nothing to list.)
libs=$( (ldd "$B2C" 2>/dev/null || true) | grep -c '=>' || true)
swiftlibs=$( (ldd "$B2C" 2>/dev/null || true) | awk '$3 ~ /swift|Foundation|dispatch|BlocksRuntime/ {print $3}')
swiftbytes=$(for l in $swiftlibs; do stat -L -c %s "$l"; done | awk '{s += $1} END {printf "%.1f", s / 1048576}')
if ((libs == 0)); then
    echo "  a static executable: no dynamic loader, no shared objects, no relocations against them at start"
else
    printf '  %d shared objects; %d of them from the Swift toolchain (%s MB): %s\n' "$libs" "$(wc -w <<<"$swiftlibs")" "$swiftbytes" \
        "$(for l in $swiftlibs; do basename "$l"; done | tr '\n' ' ')"
    LD_DEBUG=statistics "$B2C" token 2>"$BENCH_TMP/ld.txt" >/dev/null
    sed -n 's/^ *[0-9]*:[[:space:]]*//p' "$BENCH_TMP/ld.txt" \
        | grep -E 'total startup time|time needed for relocation|number of relocations:|relocations from cache|objects loaded' \
        | sed 's/^/  ld.so: /' | head -8
fi
if [[ -x $ALT_BIN/b2c ]]; then
    LD_DEBUG=statistics "$ALT_BIN/b2c" token 2>"$BENCH_TMP/ld-alt.txt" >/dev/null
    sed -n 's/^ *[0-9]*:[[:space:]]*//p' "$BENCH_TMP/ld-alt.txt" | grep -E 'total startup time|number of relocations:|objects loaded' \
        | sed "s/^/  $ALT_LABEL ld.so: /" | head -4
fi

say "system calls of one cache hit (strace -f -c):"
strace -f -c -o "$BENCH_TMP/strace.txt" "$B2C" token >/dev/null
awk 'NR > 2 && $0 !~ /^-/ && $NF != "total" { print }' "$BENCH_TMP/strace.txt" | sort -k4 -n -r | head -8 | \
    awk '{ printf "  %-16s %6s calls\n", $NF, $4 }'
total=$(awk '$NF == "total" { print $4 }' "$BENCH_TMP/strace.txt")
strace -f -e trace=network,openat,clone,clone3 -o "$BENCH_TMP/strace-net.txt" "$B2C" token >/dev/null
sockets=$(grep -cE '(socket|connect)\(' "$BENCH_TMP/strace-net.txt" || true)
opened=$(grep -c 'openat(' "$BENCH_TMP/strace-net.txt" || true)
threads=$(grep -cE 'clone3?\(' "$BENCH_TMP/strace-net.txt" || true)
store_opens=$(grep -c 'store.sqlite"' "$BENCH_TMP/strace-net.txt" || true)
printf '  %s system calls in all; %s files opened (%s of them store.sqlite*), %s threads started, %s socket/connect calls\n' \
    "$total" "$opened" "$store_opens" "$threads" "$sockets"

if perf stat -e task-clock true >/dev/null 2>&1; then
    say "perf stat (software counters, 20 runs each):"
    for c in "sqlite3 -init /dev/null $store \"$floor_sql\"" "$B2C token" ${ALT_BIN:+"$ALT_BIN/b2c token"}; do
        [[ $c == "$ALT_BIN/b2c token" && ! -x $ALT_BIN/b2c ]] && continue
        eval "perf stat -r 20 -e task-clock,page-faults,context-switches -x, -o $BENCH_TMP/perf.txt $c >/dev/null"
        printf '  %-60s %s\n' "$(cut -c1-60 <<<"${c/#$ROOT\//}")" \
            "$(awk -F, '/task-clock/ {t=$1} /page-faults/ {p=$1} /context-switches/ {c=$1} END {printf "task-clock %.2f ms, page-faults %d, context-switches %d", t, p, c}' "$BENCH_TMP/perf.txt")"
    done
fi
exit 0
