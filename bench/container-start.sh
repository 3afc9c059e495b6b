#!/usr/bin/env bash
# Benchmark: the tenant's container image, size and start time.
#
#   figures: the image's size (the archive, and unpacked as podman stores it); from `podman run -d` to the first
#            discovery answer (HTTP 200) from the host, and from the program's exec inside the container (podman's
#            StartedAt) to that answer
#   floor:   the bare program (`b2c-emulator serve --in-memory`, plain HTTP, as the image serves) from exec to its
#            first discovery answer, same run, same poll (bench/start_probe.py)
#   target:  exec in the container <= 150 ms (the bare program's target)
#
# Needs the image archive from scripts/release.sh (dist/, or IMAGE=path) and podman; podman runs from a scratch
# configuration (scripts/podman-scratch.sh: runc, cgroupfs, vfs), so `podman run` includes vfs copying the image's
# files for each new container. Knobs: RUNS (10), IMAGE.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-10}
need "$PY" podman strip
IMAGE=${IMAGE:-$(ls -t "$ROOT"/dist/b2c-emulator-*-linux-"$(uname -m)".image.tar 2>/dev/null | head -1)}
[[ -n $IMAGE && -f $IMAGE ]] || die "no image archive in $ROOT/dist (run scripts/release.sh, or set IMAGE)"
bench_init
bench_build
source "$ROOT/scripts/podman-scratch.sh"
podman_scratch "$BENCH_TMP/podman"
trap 'podman rm -af -t 0 >/dev/null 2>&1 || true; bench_cleanup' EXIT

ref=$(podman load -i "$IMAGE" 2>/dev/null | sed -n 's/^Loaded image: //p' | head -1)
[[ -n $ref ]] || die "podman load -i $IMAGE loaded nothing"
archive_mb=$(awk -v b="$(stat -c %s "$IMAGE")" 'BEGIN { printf "%.1f", b / 1e6 }')
unpacked_mb=$(awk -v b="$(podman image inspect "$ref" --format '{{.Size}}')" 'BEGIN { printf "%.1f", b / 1e6 }')
strip --strip-debug -o "$BENCH_TMP/b2c-emulator" "$EMULATOR"  # as release.sh puts it in the image
program_mb=$(awk -v b="$(stat -c %s "$BENCH_TMP/b2c-emulator")" 'BEGIN { printf "%.1f", b / 1e6 }')

discovery='http://127.0.0.1:{port}/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration'
read -r bare bare_min bare_max < <("$PY" "$BENCH_DIR/start_probe.py" "$RUNS" "$discovery" -- \
    "$EMULATOR" serve --in-memory --host 127.0.0.1 --port '{port}' | awk '{ print $2, $4, $6 }')
read -r _ run _ run_min _ run_max _ exec _ exec_min _ exec_max _ < <("$PY" "$BENCH_DIR/container_probe.py" "$RUNS" "$ref")

machine_line
printf 'image %s: archive %s MB, unpacked %s MB (of which b2c-emulator, debug info stripped: %s MB)\n' \
    "$ref" "$archive_mb" "$unpacked_mb" "$program_mb"
printf 'bare program, exec -> discovery 200 p50: %.1f ms (min %.1f, max %.1f)\n' "$bare" "$bare_min" "$bare_max"
printf 'container, exec inside -> discovery 200 p50: %.1f ms (min %.1f, max %.1f)  floor (bare program) %.1f ms  ratio %sx  target <= 150 ms  %s\n' \
    "$exec" "$exec_min" "$exec_max" "$bare" "$(ratio "$exec" "$bare")" "$(verdict "$exec" 150 le)"
printf 'container, podman run -d -> discovery 200 p50: %.1f ms (min %.1f, max %.1f)  ratio to the bare program %sx\n' \
    "$run" "$run_min" "$run_max" "$(ratio "$run" "$bare")"
exit 0
