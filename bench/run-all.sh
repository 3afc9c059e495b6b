#!/usr/bin/env bash
# Runs every benchmark one after the other, after one release build, and prints their reports
# (keep them with: bench/run-all.sh | tee bench-report.txt). On a fresh clone it first installs what the scripts need
# from Debian (as root, or through sudo) when a tool is missing; msal-python goes into a venv that peers.sh makes.
#
# Knobs: as in each script (PEOPLE, SIZES, RUNS, DURATION, MODES, ...); SKIP="refresh listing" skips benchmarks by name
# (cache-hit, lean, peers, agent, servers, encrypted, refresh, listing, throughput, start, container, load, startup); NO_INSTALL=1 installs nothing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SKIP=${SKIP:-}
# Debian packages by the command the scripts look for.
PACKAGES=(hyperfine:hyperfine wrk:wrk sqlite3:sqlite3 curl:curl strace:strace openssl:openssl readelf:binutils
    dbus-run-session:dbus gnome-keyring-daemon:gnome-keyring perf:linux-perf podman:podman runc:runc oidc-agent:oidc-agent-cli
    glewlwyd:glewlwyd)
missing=()
for entry in "${PACKAGES[@]}"; do command -v "${entry%%:*}" >/dev/null 2>&1 || missing+=("${entry#*:}"); done
[[ -x /usr/bin/time ]] || missing+=(time)
"$PY" -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
if ((${#missing[@]})) && [[ ${NO_INSTALL:-0} != 1 ]]; then
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    note "installing ${missing[*]}…"
    { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"; } >&2 \
        || note "could not install ${missing[*]}: the scripts that need them will say so"
fi
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
run lean lean-binary.sh
run peers peers.sh
run agent agent-peer.sh
run encrypted encrypted-cache-hit.sh
run refresh refresh.sh
run listing accounts-listing.sh
run throughput emulator-throughput.sh
run servers peer-servers.sh
run start emulator-start.sh
run container container-start.sh
run load emulator-load.sh
run startup startup-profile.sh
exit 0
