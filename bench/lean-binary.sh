#!/usr/bin/env bash
# Benchmark: what the emulator's code cost the client's start, measured on the binary from before the split and the
# lean one in the same run.
#
#   figure: `b2c token` p50, cache hit, 10,000 people x 3 policies, with the lean client (the tenant in b2c-emulator)
#   peer:   the same command with the one binary from before the split (BEFORE_REV, client and emulator linked
#           together), same store, same run
#   floor:  `sqlite3 <store> "<the same primary-key lookup>"`
#   also:   binary size, code size, Swift protocol-conformance records (what the runtime scans on its first
#           conformance lookups), relative relocations (applied at every start), page faults and peak RSS of a cache hit
#   target: the lean cache hit <= 1.5x the floor (the client's target in token-cache-hit.sh)
#
# The binary from before comes from BEFORE_BIN when set; otherwise from <repo>/.build-bench/b2c-monolithic, built
# once from BEFORE_REV in a git worktree (a full release build: several minutes on two cores).
#
# Knobs: PEOPLE (10000), POLICIES (3), RUNS (100), WARMUP (5), BEFORE_BIN, BEFORE_REV.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PEOPLE=${PEOPLE:-10000}
POLICIES=${POLICIES:-3}
RUNS=${RUNS:-100}
WARMUP=${WARMUP:-5}
# The last revision whose b2c carried the emulator ("The local tenant in its own program" is the next one).
BEFORE_REV=${BEFORE_REV:-d8c27ac7a7d6d670c55e3e66f0ae8f6b3560fde4}
BEFORE_BIN=${BEFORE_BIN:-$ROOT/.build-bench/b2c-monolithic}

need hyperfine sqlite3 readelf git "$PY"
[[ -x /usr/bin/time ]] || die "needs GNU time at /usr/bin/time (Debian: apt-get install time)"
bench_init
bench_build

if [[ ! -x $BEFORE_BIN ]]; then
    src=$ROOT/.build-bench/monolithic-src
    note "building the pre-split b2c ($BEFORE_REV) in $src (once; several minutes)…"
    mkdir -p "$ROOT/.build-bench"
    [[ -d $src ]] || git -C "$ROOT" worktree add --detach "$src" "$BEFORE_REV" >&2 || die "cannot check out $BEFORE_REV"
    (cd "$src" && nice -n 10 swift build -c release --static-swift-stdlib --scratch-path "$ROOT/.build-bench/monolithic-build" \
        --product b2c >"$BENCH_TMP/build-before.log" 2>&1) || { tail -30 "$BENCH_TMP/build-before.log" >&2; die "the pre-split build failed"; }
    cp "$ROOT/.build-bench/monolithic-build/release/b2c" "$BEFORE_BIN"
    echo "$BEFORE_REV" >"$ROOT/.build-bench/monolithic.rev"
fi
"$PY" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$BEFORE_BIN"

signed_in_store "$POLICIES"
stop_emulator
"$PY" "$BENCH_DIR/seed_store.py" "$store" --people "$PEOPLE" --policies "$policies" 2>"$BENCH_TMP/seed.log"
export B2C_CONFIG=$EMU_CONFIG B2C_HOME=$home
policy=$(cut -d, -f1 <<<"$policies")
account_id=$(sqlite3 "$store" "SELECT account_id FROM current_accounts WHERE policy = '$policy'")
target=$(default_target "$EMU_CONFIG")
for bin in "$B2C" "$BEFORE_BIN"; do
    [[ $("$bin" token --format json | json_field fromCache) == true ]] || die "$bin token was not a cache hit"
done
environment=$(sqlite3 "$store" "SELECT environment FROM current_accounts WHERE account_id = '$account_id' LIMIT 1")
client_id=$(sqlite3 "$store" "SELECT client_id FROM current_accounts WHERE account_id = '$account_id' LIMIT 1")
floor_sql="SELECT secret FROM access_tokens WHERE environment = '$environment' AND client_id = '$client_id' AND account_id = '$account_id' AND target = '$target' AND expires_on - CAST(strftime('%s','now') AS INTEGER) >= 300"
[[ $(sqlite3 -init /dev/null "$store" "$floor_sql" | wc -l) == 1 ]] || die "the floor query does not return exactly one token"

json=$BENCH_TMP/lean.json
run_hyperfine "$json" "$RUNS" "$WARMUP" "$B2C token" "$BEFORE_BIN token" "sqlite3 -init /dev/null $store \"$floor_sql\"" \
    "$B2C --help" "$BEFORE_BIN --help"
t_lean=$(p50_ms "$json" 0)
t_before=$(p50_ms "$json" 1)
t_floor=$(p50_ms "$json" 2)
h_lean=$(p50_ms "$json" 3)
h_before=$(p50_ms "$json" 4)

# Size, code, conformance records (4 bytes each), relative relocations (24 bytes each).
anatomy() {
    local bin=$1 name size text=0 conf=0 rel=0
    while read -r _ name _ _ _ size _; do
        case $name in
            .text) text=$((16#$size)) ;;
            swift5_protocol_conformances) conf=$((16#$size / 4)) ;;
            .rela.dyn) rel=$((16#$size / 24)) ;;
        esac
    done < <(readelf -SW "$bin" | sed -n 's/^ *\[ *[0-9]*\] */x /p')
    awk -v size="$(stat -c %s "$bin")" -v text="$text" -v conf="$conf" -v rel="$rel" \
        'BEGIN { printf "%.1f MB file, %.1f MB code, %d conformance records, %d relocations", size / 1048576, text / 1048576, conf, rel }'
}
# Minor page faults and peak RSS of one cache hit (median of 5).
faults() {
    local bin=$1 i out=() 
    for ((i = 0; i < 5; i++)); do
        /usr/bin/time -f '%R %M' -o "$BENCH_TMP/faults.txt" "$bin" token >/dev/null
        out+=("$(cat "$BENCH_TMP/faults.txt")")
    done
    printf '%s\n' "${out[@]}" | sort -n | sed -n 3p | awk '{ printf "%d page faults, %.1f MB peak RSS", $1, $2 / 1024 }'
}

machine_line
say "store: $PEOPLE people x $POLICIES policies; before = $BEFORE_REV (client and emulator in one b2c)"
say "lean b2c:   $(anatomy "$B2C"); cache hit: $(faults "$B2C")"
say "before b2c: $(anatomy "$BEFORE_BIN"); cache hit: $(faults "$BEFORE_BIN")"
say "b2c-emulator: $(anatomy "$EMULATOR")"
report_ratio "token cache hit, lean b2c" "$t_lean" "sqlite3 PK lookup" "$t_floor" 1.5
report_ratio "token cache hit, b2c before the split" "$t_before" "sqlite3 PK lookup" "$t_floor" 1.5
printf 'lean vs before: cache hit %.2f ms vs %.2f ms (%sx); b2c --help %.2f ms vs %.2f ms (%sx)\n' \
    "$t_lean" "$t_before" "$(ratio "$t_lean" "$t_before")" "$h_lean" "$h_before" "$(ratio "$h_lean" "$h_before")"
exit 0
