#!/usr/bin/env bash
# Benchmark: b2c token beside oidc-agent, the resident agent Linux users run to hand tokens to scripts.
#
#   setup:  the local tenant as Entra External ID over TLS (oidc-agent reads discovery at <issuer>/.well-known, which a
#           B2C policy authority does not serve), its confidential web app; b2c signs alice in with that app and its
#           secret; oidc-gen makes an oidc-agent account for the same issuer and app from b2c's refresh token (refresh
#           flow, the tenant's CA), scope demo.read. The tenant then stops: both answers below come from a cache.
#   figure: `b2c token` p50 (the fast path: a repeated cache hit from the store encrypted with B2C_STORE_KEY)
#   peer:   `oidc-token NAME` p50 (a Unix-socket round trip to the running agent, which holds the token in memory)
#   target: none (for scale): a resident agent answers from memory; b2c starts, reads the store and decrypts each time
#
# Needs oidc-agent (Debian: oidc-agent-cli). Knobs: RUNS (100), WARMUP (5).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-100}
WARMUP=${WARMUP:-5}

need hyperfine oidc-agent oidc-gen oidc-token "$PY"
bench_init
bench_build

start_emulator external file --external-id --client web-app

secret=WebApp-dev-secret-2026   # the default seed's web app (a public fixture of the local tenant)
web_app=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["clientId"])' "$EMU_CONFIG")
tenant_id=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["tenant"]["id"])' "$EMU_CONFIG")
scope=https://contoso.onmicrosoft.com/helloapi/demo.read
export B2C_CONFIG=$EMU_CONFIG B2C_HOME=$BENCH_TMP/home B2C_STORE_KEY=$(head -c 32 /dev/urandom | base64)
B2C_CLIENT_SECRET=$secret BROWSER="$EMULATOR browser --as alice@contoso.com --ca $EMU_CA" "$B2C" signin --scope "$scope" \
    >"$BENCH_TMP/signin.log" 2>&1 || { cat "$BENCH_TMP/signin.log" >&2; die "b2c could not sign alice in with the web app"; }
rt=$("$B2C" export --format msal --stdout 2>/dev/null | "$PY" -c 'import json,sys; print(next(iter(json.load(sys.stdin)["RefreshToken"].values()))["secret"])')

# oidc-agent in a home of its own; its configuration is encrypted with a throwaway password.
export HOME=$BENCH_TMP/agent-home
mkdir -p "$HOME"
eval "$(oidc-agent --no-autoload 2>/dev/null)" >/dev/null
EMU_AGENT_PID=$OIDCD_PID
trap 'kill "$EMU_AGENT_PID" 2>/dev/null || true; bench_cleanup' EXIT
OIDC_PW=$(head -c 12 /dev/urandom | base64) oidc-gen bench --iss="$EMU_BASE/$tenant_id/v2.0/" --manual --client-id="$web_app" \
    --client-secret="$secret" --flow=refresh --rt="$rt" --cp="$EMU_CA" --scope="openid offline_access $scope" \
    --pw-env=OIDC_PW --confirm-default --prompt=none >"$BENCH_TMP/oidc-gen.log" 2>&1 \
    || { cat "$BENCH_TMP/oidc-gen.log" >&2; die "oidc-gen could not make the account"; }
unset rt
oidc-token bench >/dev/null || die "oidc-token did not answer"
"$B2C" token --scope "$scope" >/dev/null
B2C_FAST_PATH=require "$B2C" token --scope "$scope" >/dev/null || die "b2c's fast path did not answer"
stop_emulator

json=$BENCH_TMP/agent.json
B2C_FAST_PATH=require "$B2C" token --scope "$scope" >/dev/null || die "after the tenant stopped, the fast path did not answer"
oidc-token bench >/dev/null || die "after the tenant stopped, oidc-token did not answer (exit $?)"
run_hyperfine "$json" "$RUNS" "$WARMUP" "$B2C token --scope $scope" "oidc-token bench"
t_b2c=$(p50_ms "$json" 0)
t_agent=$(p50_ms "$json" 1)
machine_line
say "oidc-agent $(oidc-agent --version 2>&1 | head -1 | awk '{ print $2 }'), the local tenant as External ID (TLS), the web app; both from a cache, the tenant stopped"
printf 'b2c token (fast path, store encrypted) p50: %.2f ms  peer oidc-token (agent, Unix socket) p50: %.2f ms  ratio %sx  (for scale: the agent keeps the token decrypted in memory; b2c has no resident process)\n' \
    "$t_b2c" "$t_agent" "$(ratio "$t_b2c" "$t_agent")"
exit 0
