#!/usr/bin/env bash
# Runs every benchmark one after the other, after one release build, and prints their reports
# (keep them with: bench/run-all.sh | tee bench-report.txt).
#
# Knobs: as in each script (PEOPLE, SIZES, RUNS, DURATION, MODES, ...); SKIP="refresh listing" skips benchmarks by name
# (cache-hit, encrypted, refresh, listing, throughput, startup).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SKIP=${SKIP:-}
bench_init
bench_build
export B2C_BENCH_NO_BUILD=1

run() {
    local name=$1 script=$2
    if [[ " $SKIP " == *" $name "* ]]; then say "== $name: skipped"; return; fi
    say "== $name ($script)"
    local started=$SECONDS
    bash "$BENCH_DIR/$script" || say "$name: the script failed (exit $?)"
    say "   ($((SECONDS - started)) s)"
}

machine_line
run cache-hit token-cache-hit.sh
run encrypted encrypted-cache-hit.sh
run refresh refresh.sh
run listing accounts-listing.sh
run throughput emulator-throughput.sh
run startup startup-profile.sh
exit 0
