#!/usr/bin/env bash
# Benchmark: the emulator as a CI fixture, start time.
#
#   figure: exec of `b2c-emulator serve --tls` to its first successful discovery answer (HTTP 200 with the policy's
#           openid-configuration), in-memory, with a new --state directory (first start: signing keys, CA and SQLite
#           made) and with an existing one (a restart); also `b2c emulator serve --tls` (the client handing over)
#   floor:  `python3 -m http.server` from exec to its first answer, same run, same poll
#   target: <= 150 ms (in-memory and --state)
#
# The poll (bench/start_probe.py) connects every 0.5 ms; its own cost is part of both figures.
# Knobs: RUNS (20).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-20}
need "$PY"
bench_init
bench_build

probe() { "$PY" "$BENCH_DIR/start_probe.py" "$RUNS" "$@" | awk '{ print $2, $4, $6 }'; }
discovery='https://127.0.0.1:{port}/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration'
serve=(serve --tls --host 127.0.0.1 --port '{port}')

read -r floor floor_min floor_max < <(probe 'http://127.0.0.1:{port}/' -- "$PY" -m http.server --bind 127.0.0.1 --directory "$BENCH_TMP" '{port}')
read -r mem mem_min mem_max < <(probe "$discovery" -- "$EMULATOR" "${serve[@]}" --in-memory)
read -r fresh fresh_min fresh_max < <(probe "$discovery" -- "$EMULATOR" "${serve[@]}" --state '{state}')
mkdir -p "$BENCH_TMP/state"
"$PY" "$BENCH_DIR/start_probe.py" 1 "$discovery" -- "$EMULATOR" "${serve[@]}" --state "$BENCH_TMP/state" >/dev/null  # made once
read -r restart restart_min restart_max < <(STATE_DIR=$BENCH_TMP/state probe "$discovery" -- "$EMULATOR" "${serve[@]}" --state '{state}')
read -r via via_min via_max < <(probe "$discovery" -- "$B2C" emulator "${serve[@]}" --in-memory)

machine_line
line() {
    printf '%s p50: %.1f ms (min %.1f, max %.1f)  floor (python3 -m http.server) p50: %.1f ms  ratio %sx  target <= 150 ms  %s\n' \
        "$1" "$2" "$3" "$4" "$floor" "$(ratio "$2" "$floor")" "$(verdict "$2" 150 le)"
}
line "emulator start, b2c-emulator serve --tls --in-memory" "$mem" "$mem_min" "$mem_max"
line "emulator start, b2c-emulator serve --tls --state NEW" "$fresh" "$fresh_min" "$fresh_max"
line "emulator start, b2c-emulator serve --tls --state EXISTING" "$restart" "$restart_min" "$restart_max"
line "emulator start, b2c emulator serve --tls --in-memory (hand-over)" "$via" "$via_min" "$via_max"
exit 0
