#!/usr/bin/env bash
# Benchmark: the emulator as a CI fixture under a pipeline's worth of load.
#
#   figure: 32 concurrent clients (b2c-bench load), each repeating one job: discovery, the authorize pages walked with
#           fresh cookies (sign-in page, credentials, redirect with a code), the code redeemed with PKCE, two refresh
#           grants, one client-credentials grant (daemon app, client_secret_post); for DURATION seconds (default 300,
#           bounded). Reported: grants/s (code + refresh + client credentials), p50/p99 per kind, errors, and the
#           emulator's RSS after a warm-up and at the end
#   floor:  the signing bound with the emulator's own RSA code (b2c-bench sign-bound: the system's libcrypto through
#           RS256Signer on every core), in grants/s: a code or refresh grant signs two tokens, a client-credentials grant one
#   target: errors 0; RSS growth <= 10 %
#   profile: when perf works, PROFILE_SECONDS of the emulator under this load are sampled (perf record) and the samples
#            split into RSA signing (libcrypto's bignum code) and the rest, with the rest's top symbols
#
# Knobs: DURATION (300), CLIENTS (32), WARMUP_SECONDS (10), MODE (file | memory; default file), PROFILE_SECONDS (15; 0
# skips the profile).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${DURATION:-300}
CLIENTS=${CLIENTS:-32}
WARMUP_SECONDS=${WARMUP_SECONDS:-10}
MODE=${MODE:-file}
PROFILE_SECONDS=${PROFILE_SECONDS:-15}
need "$PY"
bench_init
bench_build

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }

read -r _ _ _ _ _ _ _ _ sign_rate < <("$TOOL" sign-bound --seconds 3)
start_emulator emulator "$MODE"
rss_idle=$(rss_mb "$EMU_PID")
"$TOOL" load --base "$EMU_BASE" --ca "$EMU_CA" --clients "$CLIENTS" --seconds "$WARMUP_SECONDS" >"$BENCH_TMP/warmup.txt" \
    || die "the warm-up failed: $(cat "$BENCH_TMP/warmup.txt")"
rss_start=$(rss_mb "$EMU_PID")
cpu_before=$(cpu_seconds "$EMU_PID")
out=$BENCH_TMP/load.txt
"$TOOL" load --base "$EMU_BASE" --ca "$EMU_CA" --clients "$CLIENTS" --seconds "$DURATION" >"$out" &
load_pid=$!
profiled=0
if ((PROFILE_SECONDS > 0 && PROFILE_SECONDS + 5 < DURATION)) && command -v perf >/dev/null 2>&1; then
    sleep 3
    perf record -F 499 -p "$EMU_PID" -o "$BENCH_TMP/perf.data" -- sleep "$PROFILE_SECONDS" >/dev/null 2>"$BENCH_TMP/perf.log" && profiled=1 \
        || note "perf record did not work ($(tail -1 "$BENCH_TMP/perf.log")); no profile"
fi
wait "$load_pid" || die "b2c-bench load failed: $(cat "$out")"
rss_end=$(rss_mb "$EMU_PID")
emu_cpu=$(awk -v a="$cpu_before" -v b="$(cpu_seconds "$EMU_PID")" -v d="$DURATION" 'BEGIN { printf "%.2f", (b - a) / d }')
stop_emulator

read -r gps errors < <(awk '$1 == "total" { print $9, $11 }' "$out")
# The job's signatures per grant: code 2, refresh 2 + 2, client credentials 1 -> 7 signatures for 4 grants.
bound=$(awk -v s="$sign_rate" 'BEGIN { printf "%.1f", s * 4 / 7 }')
growth=$(awk -v a="$rss_start" -v b="$rss_end" 'BEGIN { printf "%.1f", 100 * (b - a) / a }')

machine_line
say "emulator ($MODE state) under $CLIENTS clients for ${DURATION}s (after ${WARMUP_SECONDS}s of warm-up); emulator CPU $emu_cpu cores"
sed -n 's/^kind /  /p; s/^grants /  all grants /p' "$out"
printf 'emulator load: %s grants/s  floor (libcrypto signing bound, %s sign/s on %d cores = %s grants/s for this mix) ratio %s%%  (diagnostic)\n' \
    "$gps" "$sign_rate" "$(nproc)" "$bound" "$(awk -v a="$gps" -v b="$bound" 'BEGIN { printf "%.1f", 100 * a / b }')"
printf 'emulator load: errors %s  target 0  %s\n' "$errors" "$([[ $errors == 0 ]] && echo PASS || echo MISS)"
printf 'emulator RSS: %s MB idle, %s MB after warm-up, %s MB at the end: growth %s%%  target <= 10%%  %s\n' \
    "$rss_idle" "$rss_start" "$rss_end" "$growth" "$(verdict "$growth" 10 le)"
grep '^error ' "$out" | head -5 | sed 's/^/  /' || true
if ((profiled)); then
    perf report -i "$BENCH_TMP/perf.data" --stdio --no-children --sort symbol 2>/dev/null | awk '
        /^#/ || NF < 3 { next }
        { pct = $1; sub("%", "", pct); sym = $0; sub(/^[^]]*] /, "", sym)
          if (sym ~ /bn_|BN_|mulx4x|sqrx8x|rsaz|RSA_|rsa_|mont/) sign += pct; else { rest += pct; if (n < 12) top[n++] = sprintf("%6.2f%%  %s", pct, substr(sym, 1, 100)) } }
        END { printf "profile (perf, %s): RSA signing %.1f%% of the emulator'"'"'s samples, everything else %.1f%%; top of the rest:\n", "'"$PROFILE_SECONDS"' s", sign, rest
              for (i = 0; i < n; i++) print "  " top[i] }'
fi
exit 0
