# Shared helpers for the benchmark scripts in bench/ (sourced, not run).
#
# Knobs (environment):
#   B2C_BENCH_SCRATCH  SwiftPM scratch path of the release build (default: <repo>/.build-release-static, or
#                      <repo>/.build-release with B2C_BENCH_DYNAMIC=1)
#   B2C_BENCH_DYNAMIC  =1: measure a build linked dynamically to the Swift runtime and Foundation; the default is the
#                      way we ship b2c, `swift build -c release` with scripts/release-flags.sh (a token cache hit starts in
#                      about half the time: no 14 shared objects to map and relocate)
#   B2C_BENCH_BIN      directory holding release `b2c`, `b2c-emulator`, `b2c-test-agent` and `b2c-bench`; when set,
#                      nothing is built
#   B2C_BENCH_NO_BUILD =1: do not run `swift build`, use what is in the scratch path
#   B2C_BENCH_KEEP     =1: keep the temporary directory (its path is printed) for inspection
#
# Every figure is printed next to a floor measured in the same run, with the ratio; tokens are never printed.

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
if [[ ${B2C_BENCH_DYNAMIC:-0} == 1 ]]; then
    SCRATCH=${B2C_BENCH_SCRATCH:-$ROOT/.build-release}
    BUILD_FLAGS=()
else
    SCRATCH=${B2C_BENCH_SCRATCH:-$ROOT/.build-release-static}
    # The way we ship b2c: the flags of scripts/release.sh, one definition for both.
    source "$ROOT/scripts/release-flags.sh"
    BUILD_FLAGS=("${RELEASE_FLAGS[@]}")
fi
BIN=${B2C_BENCH_BIN:-$SCRATCH/release}
B2C=$BIN/b2c
EMULATOR=$BIN/b2c-emulator
AGENT=$BIN/b2c-test-agent
TOOL=$BIN/b2c-bench
PY=${PYTHON:-python3}

say() { printf '%s\n' "$*"; }
note() { printf '  %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

need() {
    local tool
    for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || die "needs '$tool' (Debian: apt-get install $tool)"; done
}

# Drops the binaries' pages from the page cache, so that they are read back from disk the way an installed binary
# is. A file the linker has just written sits in the page cache in large folios, and the kernel then maps more of it
# per page fault: the same b2c measured 30.4 MB peak RSS right after a copy and 27.3 MB once read back from disk.
bench_settle_binaries() {
    sync
    "$PY" -c 'import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)' "$B2C" "$EMULATOR" "$AGENT" "$TOOL" || note "could not drop the binaries from the page cache; peak RSS may read high"
}

# The release build (incremental when already built). Output goes to stderr so that stdout stays the report.
bench_build() {
    if [[ -n ${B2C_BENCH_BIN:-} || ${B2C_BENCH_NO_BUILD:-0} == 1 ]]; then
        [[ -x $B2C && -x $BIN/b2c-client && -x $EMULATOR && -x $AGENT && -x $TOOL ]] \
            || die "no release binaries in $BIN (build: swift build -c release ${BUILD_FLAGS[*]-} --scratch-path $SCRATCH --product b2c, and likewise b2c-client, b2c-emulator, b2c-test-agent, b2c-bench)"
        bench_settle_binaries
        return
    fi
    note "building release binaries in $SCRATCH (first build takes a while)…"
    # The programs the benchmarks run, one product at a time (as scripts/release.sh builds them).
    local product
    for product in b2c b2c-client b2c-emulator b2c-test-agent b2c-bench; do
        (cd "$ROOT" && nice -n 10 swift build -c release ${BUILD_FLAGS[@]+"${BUILD_FLAGS[@]}"} --scratch-path "$SCRATCH" --product "$product" \
            >"${BENCH_TMP:-/tmp}/build.log" 2>&1) || { tail -30 "${BENCH_TMP:-/tmp}/build.log" >&2; die "release build of $product failed"; }
    done
    [[ -x $B2C && -x $EMULATOR && -x $AGENT && -x $TOOL ]] || die "the build did not produce $B2C, $EMULATOR, $AGENT and $TOOL"
    bench_settle_binaries
}

# A private temporary directory, removed on exit together with every emulator this script started.
EMU_PIDS=()
bench_cleanup() {
    local pid
    for pid in "${EMU_PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    done
    if [[ -n ${BENCH_TMP:-} && -d $BENCH_TMP ]]; then
        if [[ ${B2C_BENCH_KEEP:-0} == 1 ]]; then note "kept $BENCH_TMP"; else rm -rf "$BENCH_TMP"; fi
    fi
}
bench_init() {
    BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/b2c-bench.XXXXXX")
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    # Nothing of the caller's B2C_* may leak into the commands we measure.
    local v
    for v in $(compgen -e | grep '^B2C_' | grep -v '^B2C_BENCH_' || true); do unset "$v"; done
}

# Starts `b2c emulator serve --tls` on a free port. $1: a name (directory under BENCH_TMP); $2: file|memory; the rest:
# more options of serve (--external-id, --client NAME).
# Sets EMU_DIR, EMU_PID, EMU_BASE (https://127.0.0.1:port), EMU_CA, EMU_CONFIG.
start_emulator() {
    local name=$1 mode=${2:-file}
    shift 2 || shift $#
    EMU_DIR=$BENCH_TMP/$name
    mkdir -p "$EMU_DIR"
    local args=(emulator serve --tls --port 0 --config-out "$EMU_DIR/policies.json" "$@")
    if [[ $mode == file ]]; then args+=(--state "$EMU_DIR/state"); else args+=(--in-memory); fi
    "$B2C" "${args[@]}" >"$EMU_DIR/emulator.out" 2>"$EMU_DIR/emulator.err" &
    EMU_PID=$!
    EMU_PIDS+=("$EMU_PID")
    local i line=""
    for ((i = 0; i < 300; i++)); do
        line=$(head -n1 "$EMU_DIR/emulator.out" 2>/dev/null || true)
        [[ -n $line ]] && break
        kill -0 "$EMU_PID" 2>/dev/null || { cat "$EMU_DIR/emulator.err" >&2; die "the emulator exited"; }
        sleep 0.1
    done
    [[ -n $line ]] || die "the emulator did not start within 30 s"
    EMU_BASE=$(sed -E 's/^b2c emulator: ([^ ]+) .*/\1/' <<<"$line")
    EMU_CA=$(sed -E 's/.*; CA (.*)$/\1/' <<<"$line")
    EMU_CONFIG=$EMU_DIR/policies.json
    [[ -f $EMU_CA && -f $EMU_CONFIG ]] || die "unexpected emulator banner: $line"
}

stop_emulator() {
    local pid=${1:-$EMU_PID}
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# Signs a seeded user in through the scripted browser, over real HTTP. $1: B2C_HOME, $2: email, $3: password, $4: policy.
# The store is in plaintext mode (chosen explicitly, as `b2c config set storage plaintext` does): the seeded rows are
# written by bench/seed_store.py in that form; bench/encrypted-cache-hit.sh measures what encryption adds.
agent_signin() {
    local home=$1 email=$2 password=$3 policy=${4:-B2C_1_susi}
    mkdir -p "$home"
    B2C_HOME=$home "$B2C" config set storage plaintext >/dev/null 2>&1 || die "cannot put $home in plaintext mode"
    B2C_HOME=$home B2C_CONFIG=$EMU_CONFIG BROWSER=$AGENT B2C_AGENT_EMAIL=$email B2C_AGENT_PASSWORD=$password \
        B2C_AGENT_CA=$EMU_CA B2C_AGENT_JAR=$home.jar.json \
        "$B2C" signin --policy "$policy" --timeout 60 >"$home.signin.log" 2>&1 \
        || { cat "$home.signin.log" >&2; die "sign-in of $email under $policy failed"; }
}

# One real person (alice) signed in under B2C_1_susi through a file-state emulator, in a store at $BENCH_TMP/home: the
# template seed_store.py models its synthetic people on. $1: how many of the configuration's policies to name. Sets home,
# store and policies (comma-separated); the emulator keeps running (stop_emulator when a figure must not touch the network).
signed_in_store() {
    start_emulator emulator file
    home=$BENCH_TMP/home
    agent_signin "$home" alice@contoso.com 'Alice-dev-2026!' B2C_1_susi
    policies=$(config_policies "$EMU_CONFIG" "$1")
    store=$home/store.sqlite
}

# Runs hyperfine on the given commands (no shell: -N) and writes its JSON to $1. Output of the commands is discarded.
# Usage: run_hyperfine out.json RUNS WARMUP cmd1 [cmd2 ...]
run_hyperfine() {
    local out=$1 runs=$2 warmup=$3
    shift 3
    hyperfine -N --style none --runs "$runs" --warmup "$warmup" --export-json "$out" "$@" >"$out.log" 2>&1 \
        || { cat "$out.log" >&2; die "hyperfine failed"; }
}

# The p50 (median) of command $2 (0-based) in a hyperfine JSON, in milliseconds.
p50_ms() {
    "$PY" - "$1" "$2" <<'EOF'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]
print(f"{statistics.median(r['times']) * 1000:.3f}")
EOF
}

# The p50 of command $1 (0-based) over several hyperfine JSON files (the rounds of one measurement), in milliseconds.
# Usage: p50_ms_rounds INDEX file1.json [file2.json ...]
p50_ms_rounds() {
    "$PY" - "$@" <<'EOF'
import json, statistics, sys
index = int(sys.argv[1])
times = [t for path in sys.argv[2:] for t in json.load(open(path))["results"][index]["times"]]
print(f"{statistics.median(times) * 1000:.3f}")
EOF
}

# Peak RSS in MB (largest "Maximum resident set size" of $1 runs of the command).
peak_rss_mb() {
    local n=$1
    shift
    local i kb max=0
    for ((i = 0; i < n; i++)); do
        /usr/bin/time -v "$@" >/dev/null 2>"$BENCH_TMP/time.txt" || { cat "$BENCH_TMP/time.txt" >&2; die "command failed: $*"; }
        kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$BENCH_TMP/time.txt")
        ((kb > max)) && max=$kb
    done
    awk -v kb="$max" 'BEGIN { printf "%.1f", kb / 1024 }'
}

# ratio a/b with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# PASS when $1 <= $2 (le) or $1 >= $2 (ge).
verdict() {
    awk -v x="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "le") ? (x <= t) : (x >= t); print ok ? "PASS" : "MISS" }'
}

# A time figure against its floor: "<label> p50: X ms  floor (<floor label>) p50: Y ms  ratio R x  target <= T x  PASS|MISS"
report_ratio() {
    local label=$1 value=$2 floor_label=$3 floor=$4 target=$5
    local r
    r=$(ratio "$value" "$floor")
    printf '%s p50: %.2f ms  floor (%s) p50: %.2f ms  ratio %sx  target <= %sx  %s\n' \
        "$label" "$value" "$floor_label" "$floor" "$r" "$target" "$(verdict "$r" "$target" le)"
}

# JSON field of a b2c --format json / --output json answer on stdin (never the token itself).
json_field() { "$PY" -c 'import json,sys; v=json.load(sys.stdin); print(json.dumps(v.get(sys.argv[1])) if not isinstance(v.get(sys.argv[1]), str) else v.get(sys.argv[1]))' "$1"; }

# The resource scopes `b2c token` asks for by default (the first API's), as the store's target: sorted, lower-cased.
default_target() {
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); apis=c.get("apis") or [{}]; print(" ".join(sorted({s.lower() for s in apis[0].get("scopes", [])})))' "$1"
}

# The first $2 policy names of a policies.json, comma-separated.
config_policies() {
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); print(",".join(p["name"] for p in c["policies"][:int(sys.argv[2])]))' "$1" "$2"
}

# The token endpoint of policy $1, as a client finds it: from the policy's discovery document on the running emulator.
token_endpoint() {
    local policy=$1 tenant
    tenant=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tenant"]["name"])' "$EMU_CONFIG")
    curl -sSf --cacert "$EMU_CA" "$EMU_BASE/$tenant/$policy/v2.0/.well-known/openid-configuration" | json_field token_endpoint
}

# Writes (mode 0600) the url-encoded refresh grant that `b2c token --force-refresh` sends for the current account of
# policy $2 in store $1: grant_type, client_id, refresh_token, scope (openid offline_access + the first API's scopes),
# client_info. $3: the output file. The token goes from the store to the file without appearing anywhere else.
make_refresh_form() {
    local store=$1 policy=$2 out=$3 account_id
    account_id=$(sqlite3 "$store" "SELECT account_id FROM current_accounts WHERE policy = '$policy'")
    [[ -n $account_id ]] || die "no current account for $policy in $store"
    (umask 077; sqlite3 "$store" "SELECT secret FROM refresh_tokens WHERE account_id = '$account_id'" | "$PY" -c '
import json, sys, urllib.parse
c = json.load(open(sys.argv[1]))
scopes = (c.get("apis") or [{}])[0].get("scopes", [])
fields = [("grant_type", "refresh_token"), ("client_id", c["clientId"]), ("refresh_token", sys.stdin.read().strip()),
          ("scope", " ".join(["openid", "offline_access"] + scopes)), ("client_info", "1")]
sys.stdout.write(urllib.parse.urlencode(fields, quote_via=urllib.parse.quote))' "$EMU_CONFIG" >"$out")
}

# Writes the seed's daemon app's client-credentials grant (its secret, the hello API's .default scope) to file $1.
make_client_credentials_form() {
    printf 'grant_type=client_credentials&client_id=7c2f1d3b-8e5a-4f4c-8b9d-3a6e2f1c8d0b&client_secret=Daemon-dev-secret-2026&scope=%s' \
        'https%3A%2F%2Fcontoso.onmicrosoft.com%2Fhelloapi%2F.default' >"$1"
}

# The summary line refresh-grant.lua writes at the end of a wrk run, from wrk's output in file $1: answered, not200,
# errors, p50_us, p99_us, duration_us, on one line. Dies (showing the output) when there is none: call it as
# `summary=$(wrk_summary FILE)`, so that the failure stops the script (set -e), not only the substitution.
wrk_summary() {
    local summary
    summary=$(awk '/^b2c-bench answered/ { print $3, $5, $7, $9, $11, $13 }' "$1")
    [[ -n $summary ]] || { cat "$1" >&2; die "wrk printed no summary"; }
    printf '%s\n' "$summary"
}

# One line about the machine, so that a reader can tell a loaded run from a quiet one.
machine_line() {
    printf 'machine: %s cores, load average %s, %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
}
