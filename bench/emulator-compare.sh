#!/usr/bin/env bash
# The emulator's two benchmarks, side by side for two builds in one run: the token endpoint's refresh-grant throughput
# (emulator-throughput.sh) and a pipeline's page walk and grants (emulator-load.sh), each build measured in turn, ROUNDS
# times, alternating so that the machine's drift touches both alike. Prints each figure per build and the ratio head/base
# of the means; a change to the journeys must leave both ratios at about 1 (the floor is the base build, measured here).
#
#   usage: B2C_BENCH_BASE_BIN=DIR B2C_BENCH_BIN=DIR bench/emulator-compare.sh
#          each DIR holds release b2c, b2c-client, b2c-emulator, b2c-test-agent and b2c-bench of one revision, e.g.
#          git worktree add /tmp/base REV && (cd /tmp/base && for p in b2c b2c-client b2c-emulator b2c-test-agent b2c-bench;
#          do swift build -c release --static-swift-stdlib --product $p; done)   # then DIR=/tmp/base/.build/release
#
# Knobs: ROUNDS (2), DURATION (throughput: 10 s of load per round), LOAD_DURATION (load: 60 s per round), CLIENTS (32).
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${ROUNDS:-2}
LOAD_DURATION=${LOAD_DURATION:-60}
base=${B2C_BENCH_BASE_BIN:?set B2C_BENCH_BASE_BIN to the base build\'s release directory}
head=${B2C_BENCH_BIN:?set B2C_BENCH_BIN to the head build\'s release directory}

declare -A figures
# The `ratio N%` of the first line matching $1.
share() { awk -v pat="$1" '$0 ~ pat { for (i = 1; i <= NF; i++) if ($i == "ratio") { sub("%", "", $(i + 1)); print $(i + 1); exit } }'; }
measure() {  # $1 label, $2 bin dir
    local out rps gps
    out=$(B2C_BENCH_BIN=$2 MODES=file "$BENCH_DIR/emulator-throughput.sh" 2>&1) \
        || { printf '%s: emulator-throughput.sh failed:\n%s\n' "$1" "$out" >&2; exit 1; }
    rps=$(awk '/^emulator token endpoint/ { for (i = 1; i <= NF; i++) if ($i == "refresh") { print $(i - 1); exit } }' <<<"$out")
    # The same figure as a share of the signing bound measured beside it: the machine's speed drifts between runs (seen:
    # 2,411 and 2,923 signatures/s a minute apart), and the share does not.
    rps_share=$(share '^emulator token endpoint' <<<"$out")
    out=$(B2C_BENCH_BIN=$2 DURATION=$LOAD_DURATION WARMUP_SECONDS=5 PROFILE_SECONDS=0 "$BENCH_DIR/emulator-load.sh" 2>&1) \
        || { printf '%s: emulator-load.sh failed:\n%s\n' "$1" "$out" >&2; exit 1; }
    gps=$(awk '/^emulator load: .* grants\/s/ { print $3; exit }' <<<"$out")
    gps_share=$(share '^emulator load: .* grants/s' <<<"$out")
    printf '%s round %d: %s refresh grants/s = %s%% of the signing bound (throughput); %s grants/s = %s%% (load; errors %s)\n' \
        "$1" "$round" "${rps:-?}" "${rps_share:-?}" "${gps:-?}" "${gps_share:-?}" "$(awk '/^emulator load: errors/ { print $4 }' <<<"$out")"
    figures[$1-rps]+="${rps:-0} "
    figures[$1-gps]+="${gps:-0} "
    figures[$1-rps_share]+="${rps_share:-0} "
    figures[$1-gps_share]+="${gps_share:-0} "
}
mean() { awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.1f", s / NF }' <<<"$1"; }
for round in $(seq 1 "$ROUNDS"); do
    measure base "$base"
    measure head "$head"
done
for kind in rps rps_share gps gps_share; do
    b=$(mean "${figures[base-$kind]}")
    h=$(mean "${figures[head-$kind]}")
    case $kind in
    rps) name="refresh grants/s (emulator-throughput.sh)" ;;
    rps_share) name="  the same, % of the signing bound measured beside it" ;;
    gps) name="grants/s under the page walk (emulator-load.sh)" ;;
    *) name="  the same, % of the signing bound measured beside it" ;;
    esac
    printf '%s: head %s, base %s (floor), ratio %s\n' "$name" "$h" "$b" "$(awk -v h="$h" -v b="$b" 'BEGIN { printf "%.3f", h / b }')"
done
