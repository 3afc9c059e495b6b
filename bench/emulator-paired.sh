#!/usr/bin/env bash
# Two builds of the emulator under the same load at the same moments: a change's effect on the token endpoint's cost
# per grant, without the machine's drift.
#
#   usage: B2C_BENCH_BASE_BIN=DIR B2C_BENCH_BIN=DIR bench/emulator-paired.sh
#          each DIR holds release b2c, b2c-client, b2c-emulator, b2c-test-agent and b2c-bench of one revision, as real
#          files (`b2c emulator serve` runs the b2c-emulator beside the b2c it was started as, by its resolved path)
#
#   figure: grants/s of the head build, client credentials and refresh, each build with its state in a file and its own
#           wrk (16 connections, 1 thread), both loads running at the same time for SECONDS, ROUNDS times
#   floor:  the base build's grants/s in the same seconds
#   ratio:  head / base of the sums over the rounds; no target: a change to the token path must not make it below 1
#
# Why at the same time: this machine's speed drifts by 10-20 % from one minute to the next (a shared virtual machine), so
# runs of one build after the other (emulator-compare.sh) move the ratio by more than most changes do. Loaded together,
# the two emulators share the cores the scheduler gives each thread alike, at every moment; the build that needs less
# CPU per grant answers more grants. The figure is CPU per grant under load, context switches and cache included, which
# an instruction count (callgrind) is not. Also printed: each build's user and system CPU microseconds per grant.
#
# Knobs: ROUNDS (4), SECONDS_PER_ROUND (5), CONNECTIONS (16).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS=${ROUNDS:-4}
SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-5}
CONNECTIONS=${CONNECTIONS:-16}
POLICY=B2C_1_susi
base=${B2C_BENCH_BASE_BIN:?set B2C_BENCH_BASE_BIN to the base build\'s release directory}
head=${B2C_BENCH_BIN:?set B2C_BENCH_BIN to the head build\'s release directory}

need wrk curl sqlite3 "$PY"
bench_init
bench_build  # checks $B2C_BENCH_BIN (the head build)
machine_line

declare -A pid url form
# One build's emulator, a signed-in store and its two forms. $1: base|head, $2: its release directory.
prepare() {
    local name=$1 dir=$2
    [[ -x $dir/b2c && -x $dir/b2c-emulator && -x $dir/b2c-test-agent ]] || die "no release b2c, b2c-emulator, b2c-test-agent in $dir"
    B2C=$dir/b2c AGENT=$dir/b2c-test-agent
    start_emulator "emulator-$name" file
    agent_signin "$BENCH_TMP/home-$name" alice@contoso.com 'Alice-dev-2026!' "$POLICY"
    url[$name]=$(token_endpoint "$POLICY")
    make_refresh_form "$BENCH_TMP/home-$name/store.sqlite" "$POLICY" "$BENCH_TMP/$name-refresh.form"
    make_client_credentials_form "$BENCH_TMP/$name-cc.form"
    local grant status
    for grant in cc refresh; do
        status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$EMU_CA" --data-binary @"$BENCH_TMP/$name-$grant.form" "${url[$name]}")
        [[ $status == 200 ]] || die "$name: the $grant grant answered HTTP $status"
    done
    pid[$name]=$EMU_PID
}
prepare base "$base"
prepare head "$head"

# User and system CPU (clock ticks) of a process so far.
cpu_ticks() { awk '{ print $14, $15 }' "/proc/$1/stat"; }
declare -A sum cpu_u cpu_s
for round in $(seq 1 "$ROUNDS"); do
    for grant in cc refresh; do
        declare -A before=() wrk_pid=()
        for name in base head; do before[$name]=$(cpu_ticks "${pid[$name]}"); done
        # The load started first gets a head start of a few milliseconds: each round starts the other one first.
        order=(base head)
        ((round % 2 == 0)) && order=(head base)
        for name in "${order[@]}"; do
            B2C_BENCH_FORM=$BENCH_TMP/$name-$grant.form wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_PER_ROUND}s" \
                -s "$BENCH_DIR/refresh-grant.lua" "${url[$name]}" >"$BENCH_TMP/wrk-$name-$grant-$round.txt" 2>&1 &
            wrk_pid[$name]=$!
        done
        for name in base head; do wait "${wrk_pid[$name]}" || { cat "$BENCH_TMP/wrk-$name-$grant-$round.txt" >&2; die "wrk failed"; }; done
        line="round $round, $grant:"
        for name in base head; do
            summary=$(wrk_summary "$BENCH_TMP/wrk-$name-$grant-$round.txt")
            read -r a n e _ _ d <<<"$summary"
            ((n == 0 && e == 0)) || die "$name: $n answers were not HTTP 200 and $e requests failed"
            read -r u0 s0 <<<"${before[$name]}"
            read -r u1 s1 < <(cpu_ticks "${pid[$name]}")
            sum[$name-$grant]=$(( ${sum[$name-$grant]:-0} + a ))
            cpu_u[$name-$grant]=$(( ${cpu_u[$name-$grant]:-0} + u1 - u0 ))
            cpu_s[$name-$grant]=$(( ${cpu_s[$name-$grant]:-0} + s1 - s0 ))
            line+=" $name $(awk -v a="$a" -v d="$d" 'BEGIN { printf "%.1f", a / (d / 1e6) }')/s"
        done
        say "$line"
    done
done

hz=$(getconf CLK_TCK)
total=$((ROUNDS * SECONDS_PER_ROUND))
for grant in cc refresh; do
    name_of=$([[ $grant == cc ]] && echo "client-credentials grants/s" || echo "refresh grants/s")
    for name in base head; do
        printf '  %s: %s %.1f, CPU per grant %.0f us user + %.0f us system\n' "$name" "$name_of" \
            "$(awk -v s="${sum[$name-$grant]}" -v t="$total" 'BEGIN { print s / t }')" \
            "$(awk -v c="${cpu_u[$name-$grant]}" -v n="${sum[$name-$grant]}" -v hz="$hz" 'BEGIN { print c / hz * 1e6 / n }')" \
            "$(awk -v c="${cpu_s[$name-$grant]}" -v n="${sum[$name-$grant]}" -v hz="$hz" 'BEGIN { print c / hz * 1e6 / n }')"
    done
    printf 'paired %s, both builds loaded at once (%d rounds of %d s): head %.1f, base %.1f (floor), ratio %s\n' "$name_of" \
        "$ROUNDS" "$SECONDS_PER_ROUND" "$(awk -v s="${sum[head-$grant]}" -v t="$total" 'BEGIN { print s / t }')" \
        "$(awk -v s="${sum[base-$grant]}" -v t="$total" 'BEGIN { print s / t }')" \
        "$(awk -v h="${sum[head-$grant]}" -v b="${sum[base-$grant]}" 'BEGIN { printf "%.3f", h / b }')"
done
