#!/usr/bin/env bash
# The container image release.sh made, loaded and used the way CI users use it (run by scripts/test-install.sh):
#
#   scripts/test-image.sh IMAGE.tar CLIENT_BIN_DIR
#
#   - podman loads the archive (also read as Docker's format); the image runs as user 65532, holds no shell, carries
#     its version and revision, and with no arguments serves the default tenant on 0.0.0.0:8080
#   - started with a published port, a mounted seed (a person only it has) and output directory, and a state volume;
#     from the host: b2c signin (ROPC), b2c token, b2c call-api, the admin surface with its token; one log line per
#     request; SIGTERM ends it with exit 0; started again on the same volume it is the same tenant (the refresh
#     token works, a person added through the admin surface is still there), and an app-only token
#   - the admin surface needs its token from the host whatever forwards the port: --network host (the host is then a
#     loopback peer), and pasta and slirp4netns with either port handler where this podman has them
#   - docs/container.md's examples: the walkthrough's shell blocks as written (with an MFA sign-in and a sign-up whose codes
#     the scripted browser reads with the admin token, and an API connector on the host at host.containers.internal),
#     the HTTPS blocks (--tls --ca-out; curl --cacert, b2c, msal-python), the GitHub Actions job (its service
#     started from image/ports/env/options, then its steps), the compose file (docker-compose through podman's
#     Docker-compatible socket) and the testcontainers test (pytest, testcontainers from PyPI)
#
# Podman here runs with runc, cgroupfs, vfs storage and no default ulimits, all from a containers.conf and a
# storage.conf in a scratch directory (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF): nothing on the machine changes.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fail() { printf 'test-image: FAILED: %s\n' "$*" >&2; exit 1; }
step() { printf 'test-image: %s\n' "$*" >&2; }
(($# == 2)) || fail "usage: scripts/test-image.sh IMAGE.tar CLIENT_BIN_DIR"
image=$1 cbin=$2
for tool in podman runc curl python3 openssl docker-compose; do
    command -v "$tool" >/dev/null 2>&1 || fail "needs '$tool' (Debian: apt-get install podman runc curl python3 openssl docker-compose)"
done
# Debian's Python, where python3-yaml and python3-venv put their modules (another python3 may come first on PATH).
py=$(command -v /usr/bin/python3 || command -v python3)
"$py" -c 'import yaml' 2>/dev/null || fail "needs python3-yaml (Debian: apt-get install python3-yaml)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/b2c-image-test.XXXXXX")
pm=$tmp/podman
source "$ROOT/scripts/podman-scratch.sh"
podman_scratch "$pm"
service=
cleanup() {
    podman rm -af -t 0 >/dev/null 2>&1 || true
    podman volume prune -f >/dev/null 2>&1 || true
    podman network prune -f >/dev/null 2>&1 || true
    [[ -n $service ]] && kill "$service" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits up to a minute for a tenant's /health; on failure shows the container's log.
wait_health() {
    local url=$1 name=$2
    for _ in $(seq 1 120); do curl -fsS -o /dev/null "$url/health" 2>/dev/null && return 0; sleep 0.5; done
    podman logs "$name" >&2 || true
    fail "the tenant in container $name did not answer $url/health within a minute"
}
# b2c on the host: the archive's programs, a fresh home, nothing else from this environment.
key=$(openssl rand -base64 32)
chome=$tmp/client-home
mkdir -p "$chome"
client() { env -i HOME="$chome" PATH="$cbin:/usr/bin:/bin" B2C_STORE_KEY="$key" "$@"; }

# Loading: the OCI layout, and the same archive read as Docker's format (its manifest.json).
loaded=$(podman load -i "$image" 2>&1) || fail "podman load -i $image: $loaded"
ref=$(sed -n 's/^Loaded image: //p' <<<"$loaded" | head -1)
version=$(podman image inspect "$ref" --format '{{index .Annotations "org.opencontainers.image.version"}}')
[[ $ref == "localhost/b2c-emulator:$version" && -n $version ]] || fail "the archive loaded as '$ref' (version '$version')"
id=$(podman image inspect "$ref" --format '{{.Id}}')
podman pull -q "docker-archive:$image" >/dev/null 2>&1 || fail "the archive is not readable as Docker's format (manifest.json)"
[[ $(podman image inspect "$ref" --format '{{.Id}}') == "$id" ]] || fail "Docker's manifest.json names another image than the OCI index"
[[ $(podman image inspect "$ref" --format '{{.Config.User}}') == 65532:65532 ]] || fail "the image does not run as 65532:65532"
revision=$(podman image inspect "$ref" --format '{{index .Labels "org.opencontainers.image.revision"}}')
if git -C "$ROOT" rev-parse HEAD >/dev/null 2>&1 && [[ $revision != "$(git -C "$ROOT" rev-parse HEAD)" ]]; then
    step "note: the image's revision $revision is not this clone's HEAD (an older release.sh run)"
fi
podman run --rm --entrypoint /bin/sh "$ref" -c true >/dev/null 2>&1 && fail "the image has a shell"
size=$(podman image inspect "$ref" --format '{{.Size}}')
step "loaded $ref ($((size / 1000000)) MB; user 65532; no shell; revision ${revision:0:12})"

# With no arguments: the default tenant on 0.0.0.0:8080.
port=$(free_port)
podman run -d --name b2c-bare -p "127.0.0.1:$port:8080" "$ref" >/dev/null
wait_health "http://127.0.0.1:$port" b2c-bare
# (the logs are read whole first: `grep -q` stops reading at its match, and under pipefail podman's SIGPIPE would fail it)
bare_log=$(podman logs b2c-bare 2>&1)
grep -q "listening on 0.0.0.0:8080" <<<"$bare_log" || fail "with no arguments it does not listen on 0.0.0.0:8080: $bare_log"
podman exec b2c-bare b2c-emulator health >/dev/null || fail "b2c-emulator health inside the container did not answer 0"
podman rm -f -t 0 b2c-bare >/dev/null
step "no arguments: serves the default tenant on 0.0.0.0:8080; b2c-emulator health answers inside"

# A seed with a person only it has, a directory for what the tenant writes, a volume for its state.
mkdir -p "$tmp/seed" "$tmp/out"
"$cbin/b2c-emulator" default-seed | "$py" -c '
import json, sys
seed = json.load(sys.stdin)
seed["users"].append({"email": "dana@contoso.com", "password": "Dana-ci-2026!", "displayName": "Dana"})
json.dump(seed, sys.stdout)' >"$tmp/seed/seed.json"
chmod 644 "$tmp/seed/seed.json"
podman volume create b2c-state >/dev/null
port=$(free_port)
url=http://127.0.0.1:$port
start_tenant() {
    podman run -d --name b2c-tenant -p "127.0.0.1:$port:8080" -v "$tmp/seed:/seed:ro" -v "$tmp/out:/out:U" \
        -v b2c-state:/var/lib/b2c-emulator "$ref" serve --seed /seed/seed.json --state /var/lib/b2c-emulator \
        --public-url "$url" --admin-token-file /out/admin-token "$@" >/dev/null
    wait_health "$url" b2c-tenant
}
start_tenant --config-out /out/policies.json
config=$tmp/out/policies.json
[[ -s $config ]] || fail "--config-out /out/policies.json wrote nothing to the mounted directory"
grep -q "\"$url\"" "$config" || fail "the configuration does not name the public URL $url: $(cat "$config")"
issuer=$(curl -fsS "$url/contoso.onmicrosoft.com/B2C_1_ROPC_Auth/v2.0/.well-known/openid-configuration" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["issuer"])')
[[ $issuer == "$url/"* ]] || fail "the issuer is $issuer, not under the public URL $url"

# From the host: ROPC as the mounted seed's person, a token, an API call.
printf '%s\n' 'Dana-ci-2026!' | client B2C_CONFIG="$config" b2c signin --policy B2C_1_ROPC_Auth --username dana@contoso.com \
    --password-stdin >"$tmp/signin.out" 2>&1 || fail "b2c signin (ROPC) against the container: $(cat "$tmp/signin.out")"
token=$(client B2C_CONFIG="$config" b2c token --policy B2C_1_ROPC_Auth --api hello) || fail "b2c token against the container"
[[ $(tr -cd . <<<"$token" | wc -c) == 2 ]] || fail "b2c token printed no JWT"
client B2C_CONFIG="$config" b2c call-api --policy B2C_1_ROPC_Auth --api hello /hello >"$tmp/call.out" 2>&1 \
    || fail "b2c call-api against the container: $(cat "$tmp/call.out")"
grep -q 'dana@contoso.com\|Dana' "$tmp/call.out" || fail "the API's answer does not name Dana: $(cat "$tmp/call.out")"
step "from the host: signin (ROPC, a person from the mounted seed), token, call-api"

# The admin surface from the host: refused without the token, answered with it.
admin_token=$(cat "$tmp/out/admin-token")
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/_admin/users")
[[ $code == 403 ]] || fail "the admin surface answered the host without a token (HTTP $code)"
curl -fsS -o /dev/null -H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' \
    -d '{"email": "erin@contoso.com", "password": "Erin-ci-2026!"}' "$url/_admin/users" || fail "adding a person with the admin token"
podman logs b2c-tenant 2>/dev/null | grep -Eq '^[0-9T:-]+Z POST /_admin/users 20[01] [0-9]+ms$' \
    || fail "no request line for POST /_admin/users in the log: $(podman logs b2c-tenant 2>&1 | tail -5)"
tenant_log=$(podman logs b2c-tenant 2>&1)
grep -q 'code=\|password' <<<"$tenant_log" && fail "the request log shows a query or a password"
step "admin surface: 403 without the token, 201 with it; one log line per request"

# The admin surface whatever forwards the host's connections: pasta splices them in from the container's loopback, and
# --network host shares the host's, so a host request may be a loopback peer. The image requires the token from every
# peer (B2C_EMULATOR_ADMIN_TOKEN_REQUIRED=true). --network host runs on any podman; the others where it has them.
admin_from_host() { # NAME NETWORK: 403 without the token, 200 with it
    local name=$1 net=$2 aport publish code
    aport=$(free_port)
    publish=(-p "127.0.0.1:$aport:8080")
    [[ $net == host ]] && publish=(-e B2C_EMULATOR_HOST=127.0.0.1 -e "B2C_EMULATOR_PORT=$aport")
    podman run -d --name "$name" --network "$net" "${publish[@]}" -v "$tmp/out:/out:U" "$ref" serve \
        --admin-token-file "/out/$name-token" >/dev/null
    wait_health "http://127.0.0.1:$aport" "$name"
    code=$(curl -s -o "$tmp/$name.body" -w '%{http_code}' "http://127.0.0.1:$aport/_admin/users")
    [[ $code == 403 ]] || fail "--network $net: the admin surface answered the host without the token (HTTP $code): $(cat "$tmp/$name.body")"
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$tmp/out/$name-token")" \
        "http://127.0.0.1:$aport/_admin/users")
    [[ $code == 200 ]] || fail "--network $net: the admin surface refused its token (HTTP $code)"
    podman rm -f -t 0 "$name" >/dev/null
}
admin_from_host b2c-net-host host
checked=(host) missing=()
for net in pasta slirp4netns:port_handler=rootlesskit slirp4netns:port_handler=slirp4netns; do
    if podman run --rm --network "$net" "$ref" --version >/dev/null 2>&1; then
        admin_from_host "b2c-net-$((${#checked[@]} + 1))" "$net"
        checked+=("$net")
    else
        missing+=("$net")
    fi
done
step "admin surface from the host: 403 without the token, 200 with it, through --network ${checked[*]}${missing:+ (this podman has no ${missing[*]})}"

# SIGTERM as PID 1: exit 0, well before podman's kill after 2 s.
started=$(date +%s%N)
podman stop -t 2 b2c-tenant >/dev/null
ms=$((($(date +%s%N) - started) / 1000000))
status=$(podman inspect b2c-tenant --format '{{.State.ExitCode}}')
[[ $status == 0 ]] || fail "after SIGTERM the tenant exited $status, not 0 (137: it did not stop within 2 s)"
podman rm b2c-tenant >/dev/null
step "SIGTERM: exit 0 (podman stop took $ms ms)"

# The same volume again: the same tenant, and the daemon's configuration for an app-only token.
start_tenant --client daemon --config-out /out/daemon.json
client B2C_CONFIG="$config" b2c token --policy B2C_1_ROPC_Auth --api hello --force-refresh >/dev/null 2>"$tmp/refresh.err" \
    || fail "the refresh token did not work after the restart: $(cat "$tmp/refresh.err")"
printf '%s\n' 'Erin-ci-2026!' | client B2C_CONFIG="$config" b2c signin --policy B2C_1_ROPC_Auth --username erin@contoso.com \
    --password-stdin >/dev/null 2>"$tmp/erin.err" || fail "the person added before the restart is gone: $(cat "$tmp/erin.err")"
client B2C_CONFIG="$tmp/out/daemon.json" B2C_CLIENT_SECRET=Daemon-dev-secret-2026 b2c token --app --api hello >/dev/null \
    2>"$tmp/app.err" || fail "an app-only token from the container: $(cat "$tmp/app.err")"
accounts=$(client B2C_CONFIG="$config" b2c accounts)
grep -q dana@contoso.com <<<"$accounts" && grep -q erin@contoso.com <<<"$accounts" || fail "b2c accounts: $accounts"
podman rm -f -t 2 b2c-tenant >/dev/null
podman volume rm b2c-state >/dev/null
step "restart on the same volume: refresh works, the admin-added person signs in; app-only token"

# docs/container.md (and the README's block): the blocks marked <!-- image-test: NAME -->, in order.
doc=$ROOT/docs/container.md
blocks() {
    awk -v want="$1" '
        /^<!-- image-test: / { marked = ($3 == want); next }
        /^<!--/ { next }
        /^```/ { if (inside) { inside = 0; marked = 0; print "\n"; next } if (marked) { inside = 1; next } }
        inside { print }
        !/^```/ && !inside && !/^<!--/ { marked = 0 }' "${2:-$doc}"
}
[[ -n $(blocks readme "$ROOT/README.md") && -n $(blocks walkthrough) && -n $(blocks services) && -n $(blocks compose) && -n $(blocks testcontainers) ]] \
    || fail "docs/container.md lacks one of its image-test blocks (walkthrough, services, compose, testcontainers)"
grep -q "b2c-emulator:$version" "$doc" || fail "docs/container.md does not name this release's image b2c-emulator:$version"
# What `docker load` and a registry push would name it.
podman tag "$ref" "docker.io/library/b2c-emulator:$version" "ghcr.io/your-org/b2c-emulator:$version"
work=$tmp/docs
mkdir -p "$work/dist" "$work/home"
ln -s "$image" "$work/dist/$(basename "$image")"
# The README's two lines: load, then serve on 8443 with no other argument.
(cd "$work/dist" && env -i HOME="$work/home" PATH="/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin" CONTAINERS_CONF="$CONTAINERS_CONF" \
    CONTAINERS_STORAGE_CONF="$CONTAINERS_STORAGE_CONF" bash -e -o pipefail -c "$(blocks readme "$ROOT/README.md")") >"$tmp/readme.out" 2>&1 \
    || { cat "$tmp/readme.out" >&2; fail "the README's container block failed"; }
wait_health http://127.0.0.1:8443 "$(podman ps -q | head -1)"
[[ $(curl -fsS http://127.0.0.1:8443/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration) == *'"issuer":"http://127.0.0.1:8443/'* ]] \
    || fail "the README's container does not name http://127.0.0.1:8443 as its issuer"
podman rm -af -t 0 >/dev/null
step "README.md: the container block ran as written"
(cd "$work" && env -i HOME="$work/home" PATH="$cbin:/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin" CONTAINERS_CONF="$CONTAINERS_CONF" \
    CONTAINERS_STORAGE_CONF="$CONTAINERS_STORAGE_CONF" timeout 300 bash -e -o pipefail -c "$(blocks walkthrough)") \
    >"$tmp/walkthrough.out" 2>&1 || { tail -30 "$tmp/walkthrough.out" >&2; fail "docs/container.md's walkthrough failed"; }
grep -q "refreshed after the restart" "$tmp/walkthrough.out" || { tail -30 "$tmp/walkthrough.out" >&2; false; } || fail "the walkthrough did not refresh after the restart"
grep -q '"outcome":"continue"' "$tmp/walkthrough.out" || { tail -30 "$tmp/walkthrough.out" >&2; false; } \
    || fail "the walkthrough's sign-up did not call the connector on the host (host.containers.internal)"
step "docs/container.md: the walkthrough ran as written (MFA and sign-up codes through the admin token, a connector on the host)"

# The GitHub Actions job: its service with podman, then its steps (checkout: the committed configuration, written
# as the text says).
job=$tmp/job
mkdir -p "$job/ci" "$job/home"
blocks services >"$tmp/services.yaml"
"$cbin/b2c-emulator" serve --public-url http://127.0.0.1:8443 --config-out "$job/ci/policies.json" >/dev/null &
writer=$!
for _ in $(seq 1 100); do [[ -s $job/ci/policies.json ]] && break; sleep 0.1; done
kill "$writer"
wait "$writer" || true
[[ -s $job/ci/policies.json ]] || fail "b2c-emulator serve --config-out wrote no ci/policies.json"
"$py" - "$tmp/services.yaml" "$job" "$job/home" "$cbin" <<'PY' >"$tmp/services.out" 2>&1 || { tail -30 "$tmp/services.out" >&2; fail "docs/container.md's GitHub Actions job failed"; }
import os, shlex, subprocess, sys, yaml
path, workspace, home, cbin = sys.argv[1:]
[(name, job)] = yaml.safe_load(open(path))["jobs"].items()
names = []
try:
    for sname, svc in job.get("services", {}).items():
        args = ["podman", "run", "-d", "--name", f"gha-{sname}"]
        for p in svc.get("ports", []): args += ["-p", f"127.0.0.1:{p}" if str(p).count(":") == 1 else str(p)]
        for k, v in (svc.get("env") or {}).items(): args += ["-e", f"{k}={v}"]
        args += shlex.split(svc.get("options", "")) + [svc["image"]]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        names.append(f"gha-{sname}")
    env_file = os.path.join(workspace, ".github_env")
    open(env_file, "w").close()
    env = {"HOME": home, "PATH": f"{cbin}:/usr/bin:/bin", "GITHUB_ENV": env_file}
    env.update({k: str(v) for k, v in (job.get("env") or {}).items()})
    for s in job["steps"]:
        if "uses" in s:
            assert s["uses"].startswith("actions/checkout"), s["uses"]
            continue
        for line in open(env_file):
            if "=" in line: k, v = line.rstrip("\n").split("=", 1); env[k] = v
        print("step:", s["run"], flush=True)
        subprocess.run(["bash", "-e", "-o", "pipefail", "-c", s["run"]], cwd=workspace, env=env, check=True, timeout=120)
finally:
    for n in names: subprocess.run(["podman", "rm", "-f", "-t", "0", n], stdout=subprocess.DEVNULL)
PY
grep -q '^Signed in as bob@contoso.com' "$tmp/services.out" && grep -q '"name"' "$tmp/services.out" \
    || { cat "$tmp/services.out" >&2; fail "the GitHub Actions job did not reach the tenant and its API"; }
step "docs/container.md: the GitHub Actions job (service and steps) ran"

# compose and testcontainers go through podman's Docker-compatible socket.
podman system service --time=0 "unix://$pm/podman.sock" >"$tmp/service.log" 2>&1 &
service=$!
for _ in $(seq 1 100); do [[ -S $pm/podman.sock ]] && break; sleep 0.1; done
[[ -S $pm/podman.sock ]] || fail "podman system service did not open its socket: $(cat "$tmp/service.log")"
export DOCKER_HOST=unix://$pm/podman.sock
mkdir -p "$tmp/compose"
blocks compose >"$tmp/compose/compose.yaml"
(cd "$tmp/compose" && timeout 120 docker-compose -p b2cdocs up -d) >"$tmp/compose.out" 2>&1 \
    || { cat "$tmp/compose.out" >&2; fail "docker-compose up with docs/container.md's compose file"; }
wait_health http://127.0.0.1:8443 b2cdocs_b2c_1
podman healthcheck run b2cdocs_b2c_1 >/dev/null || fail "the compose file's health check does not pass inside the container"
rm -rf "$tmp/compose-home" && mkdir -p "$tmp/compose-home"
printf '%s\n' 'Bob-dev-2026!' | env -i HOME="$tmp/compose-home" PATH="$cbin:/usr/bin:/bin" B2C_STORE_KEY="$key" \
    B2C_CONFIG="$job/ci/policies.json" b2c signin --policy B2C_1_ROPC_Auth --username bob@contoso.com --password-stdin \
    >/dev/null 2>"$tmp/compose.err" || fail "signing bob in against the compose tenant: $(cat "$tmp/compose.err")"
(cd "$tmp/compose" && timeout 120 docker-compose -p b2cdocs down -v) >>"$tmp/compose.out" 2>&1 || fail "docker-compose down"
step "docs/container.md: the compose file ran with docker-compose; its health check passes; bob signs in"

venv=$tmp/venv
"$py" -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check 'testcontainers>=4,<5' pytest >"$tmp/pip.out" 2>&1 \
    || { tail -20 "$tmp/pip.out" >&2; fail "pip install testcontainers pytest"; }
mkdir -p "$tmp/tc"
blocks testcontainers >"$tmp/tc/test_tenant.py"
(cd "$tmp/tc" && TESTCONTAINERS_RYUK_DISABLED=true timeout 300 "$venv/bin/python" -m pytest -q -p no:cacheprovider test_tenant.py) \
    >"$tmp/tc.out" 2>&1 || { tail -30 "$tmp/tc.out" >&2; fail "docs/container.md's testcontainers test failed"; }
step "docs/container.md: the testcontainers test passed ($(tail -1 "$tmp/tc.out"))"

# The web app with MSAL: the tenant with --tls and --ca-out, the host's curl and b2c trusting the CA, then msal-python.
"$venv/bin/pip" install -q --disable-pip-version-check msal >>"$tmp/pip.out" 2>&1 || { tail -20 "$tmp/pip.out" >&2; fail "pip install msal"; }
[[ -n $(blocks tls) && -n $(blocks msal) && -n $(blocks tls-stop) ]] || fail "docs/container.md lacks its tls, msal or tls-stop block"
blocks msal >"$work/msal_app.py"
# A clean shell: its own HOME, so the block's fresh B2C_STORE_KEY meets no store the walkthrough's key encrypted.
mkdir -p "$work/tls-home"
(cd "$work" && env -i HOME="$work/tls-home" PATH="$cbin:/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin" CONTAINERS_CONF="$CONTAINERS_CONF" \
    CONTAINERS_STORAGE_CONF="$CONTAINERS_STORAGE_CONF" timeout 300 bash -e -o pipefail -c \
    "$(blocks tls)"$'\n'"'$venv/bin/python' msal_app.py"$'\n'"$(blocks tls-stop)") >"$tmp/tls.out" 2>&1 \
    || { tail -30 "$tmp/tls.out" >&2; fail "docs/container.md's HTTPS and msal-python blocks failed"; }
[[ $(stat -c %a "$work/b2c-tls/ca.pem") == 644 ]] && grep -q '"caFile" *: *"ca.pem"' "$work/b2c-tls/policies.json" \
    || fail "--ca-out did not give the host a 0644 ca.pem named by the configuration: $(ls -l "$work/b2c-tls")"
grep -q "msal-python: a token over https" "$tmp/tls.out" || { tail -30 "$tmp/tls.out" >&2; fail "msal-python got no token over https"; }
step "docs/container.md: --tls --ca-out; curl --cacert, b2c and msal-python trust the CA the host reads"
step "OK"
