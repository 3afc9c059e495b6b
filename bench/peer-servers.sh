#!/usr/bin/env bash
# Benchmark: the emulator's token endpoint beside real OpenID Connect servers, the same load on each.
#
#   figures: refresh grants/s and client-credentials grants/s of the emulator (file state, as emulator-throughput.sh)
#   peers:   Glewlwyd (Debian's glewlwyd: C, its SQLite backend, its OpenID Connect plugin) and IdentityPython's OP
#            (idpyoidc from PyPI, with its token endpoint served by a small WSGI app, bench/peer_idpy.py, under a
#            production WSGI server: waitress), each set up here from scratch
#   same for all: RS256 with a 2048-bit key, TLS on loopback, wrk with CONNECTIONS connections and THREADS threads for
#            DURATION seconds, the same grant repeated (refresh: one refresh token; client credentials: one confidential
#            client), non-200 answers counted (must be 0)
#   work per answer (not the same, and said beside the figures): the emulator signs an id token and an access token for
#            a refresh, reads the grant and the person from SQLite and seals the new refresh token (a JWE: nothing is
#            written but the token log's batch); Glewlwyd signs an access token (its refresh answer has no
#            id token) and extends the refresh token; see the idpyoidc line for its own
#   target:  the emulator ahead of both peers on both grants
#
# Knobs: DURATION (10), CONNECTIONS (16), THREADS (1), PEERS ("glewlwyd idpyoidc").
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
PEERS=${PEERS:-glewlwyd idpyoidc}
VENV=${B2C_BENCH_IDPY_VENV:-$ROOT/.build-bench/venv-idpy}

need wrk openssl curl sqlite3 "$PY"
bench_init
bench_build

# Requests/s and non-200 answers of wrk POSTing the form in file $2 to URL $1 (a 2 s warm-up first).
measure() {
    local url=$1 form=$2 out=$BENCH_TMP/wrk-$RANDOM.txt
    B2C_BENCH_FORM=$form wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s "$BENCH_DIR/refresh-grant.lua" "$url" >/dev/null 2>&1 || true
    B2C_BENCH_FORM=$form wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$BENCH_DIR/refresh-grant.lua" "$url" \
        >"$out" 2>&1 || { cat "$out" >&2; die "wrk failed against $url"; }
    local rps summary not200 errors
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
    summary=$(wrk_summary "$out")
    read -r _ not200 errors _ <<<"$summary"
    printf '%s %s %s\n' "$rps" "$not200" "$errors"
}

# A form file (0600) from name=value arguments, url-encoded.
form_file() {
    local out=$1
    shift
    (umask 077; "$PY" -c 'import sys, urllib.parse; sys.stdout.write(urllib.parse.urlencode([tuple(a.split("=", 1)) for a in sys.argv[1:]]))' "$@" >"$out")
}

# --- the emulator
start_emulator emulator file
home=$BENCH_TMP/home
agent_signin "$home" alice@contoso.com 'Alice-dev-2026!' B2C_1_susi
url=$(token_endpoint B2C_1_susi)
make_refresh_form "$home/store.sqlite" B2C_1_susi "$BENCH_TMP/emu-refresh.form"
form_file "$BENCH_TMP/emu-cc.form" grant_type=client_credentials client_id=7c2f1d3b-8e5a-4f4c-8b9d-3a6e2f1c8d0b \
    client_secret=Daemon-dev-secret-2026 scope=https://contoso.onmicrosoft.com/helloapi/.default
for f in refresh cc; do
    status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$EMU_CA" --data-binary @"$BENCH_TMP/emu-$f.form" "$url")
    [[ $status == 200 ]] || die "the emulator answered the $f grant with HTTP $status"
done
read -r emu_refresh emu_refresh_bad emu_refresh_err < <(measure "$url" "$BENCH_TMP/emu-refresh.form")
read -r emu_cc emu_cc_bad emu_cc_err < <(measure "$url" "$BENCH_TMP/emu-cc.form")
stop_emulator

results=()
# --- Glewlwyd
glewlwyd_peer() {
    command -v glewlwyd >/dev/null || { say "glewlwyd: not installed (Debian: apt-get install glewlwyd); not measured"; return; }
    local dir=$BENCH_TMP/glewlwyd port base
    mkdir -p "$dir"
    zcat /usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz | sqlite3 "$dir/glewlwyd.db"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/tls.key" -out "$dir/tls.pem" -days 2 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 2>/dev/null
    openssl genrsa -out "$dir/sign.key" 2048 2>/dev/null
    openssl req -x509 -new -key "$dir/sign.key" -out "$dir/sign.pem" -days 2 -subj /CN=sign 2>/dev/null
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    base=https://127.0.0.1:$port/api
    # The Debian configuration with our port, TLS files, log and SQLite database.
    sed -e "s|^port=.*|port=$port|" -e "s|^external_url=.*|external_url=\"https://127.0.0.1:$port/\"|" \
        -e "s|^log_file=.*|log_file=\"$dir/glewlwyd.log\"|" -e 's|^log_level=.*|log_level="ERROR"|' \
        -e 's|^use_secure_connection=.*|use_secure_connection=true|' -e "s|^secure_connection_key_file=.*|secure_connection_key_file=\"$dir/tls.key\"|" \
        -e "s|^secure_connection_pem_file=.*|secure_connection_pem_file=\"$dir/tls.pem\"|" -e 's|^secure_connection_ca_file=.*||' \
        -e "s|^@include.*|database = { type = \"sqlite3\" path = \"$dir/glewlwyd.db\" };|" /etc/glewlwyd/glewlwyd.conf >"$dir/glewlwyd.conf"
    glewlwyd --config-file="$dir/glewlwyd.conf" >"$dir/run.out" 2>&1 &
    EMU_PIDS+=($!)
    local i
    for ((i = 0; i < 100; i++)); do curl -sk -o /dev/null "$base/" && break; sleep 0.1; done
    # Its admin API (the seeded admin): the OpenID Connect plugin (RS256, 2048-bit key), a scope, a confidential client,
    # a user.
    curl -sfk -c "$dir/cookies" -H 'Content-Type: application/json' -d '{"username":"admin","password":"password"}' "$base/auth/" \
        >/dev/null || die "glewlwyd: the admin could not log in"
    "$PY" - "$dir" "$port" <<'EOF' >"$dir/plugin.json"
import json, sys
d, port = sys.argv[1], sys.argv[2]
print(json.dumps({"module": "oidc", "name": "oidc", "display_name": "OIDC", "parameters": {
    "iss": f"https://127.0.0.1:{port}/", "jwt-type": "rsa", "jwt-key-size": "256", "key": open(f"{d}/sign.key").read(),
    "cert": open(f"{d}/sign.pem").read(), "access-token-duration": 3600, "refresh-token-duration": 1209600,
    "code-duration": 600, "refresh-token-rolling": True, "allow-non-oidc": True, "auth-type-code-enabled": True,
    "auth-type-token-enabled": True, "auth-type-id-token-enabled": True, "auth-type-none-enabled": True,
    "auth-type-password-enabled": True, "auth-type-client-enabled": True, "auth-type-refresh-enabled": True,
    "auth-type-device-enabled": False, "scope": [], "claims": [], "additional-parameters": []}}))
EOF
    local admin=(curl -sfk -b "$dir/cookies" -H 'Content-Type: application/json' -o /dev/null)
    "${admin[@]}" -d @"$dir/plugin.json" "$base/mod/plugin/" || die "glewlwyd: the OpenID Connect plugin was refused"
    "${admin[@]}" -d '{"name":"demo.read","display_name":"demo","description":"bench","password_required":false}' "$base/scope/" \
        || die "glewlwyd: the scope was refused"
    "${admin[@]}" -d '{"client_id":"bench","name":"bench","confidential":true,"client_secret":"Bench-secret-2026","token_endpoint_auth_method":["client_secret_basic","client_secret_post"],"redirect_uri":["https://localhost/"],"authorization_type":["password","client_credentials","refresh_token"],"scope":["openid","demo.read"],"enabled":true}' \
        "$base/client/" || die "glewlwyd: the client was refused"
    "${admin[@]}" -d '{"username":"alice","name":"Alice","password":"Alice-dev-2026!","scope":["openid","demo.read"],"enabled":true}' \
        "$base/user/" || die "glewlwyd: the user was refused"
    local rt
    rt=$(curl -sfk -d client_id=bench -d client_secret=Bench-secret-2026 -d grant_type=password -d username=alice \
        -d 'password=Alice-dev-2026!' -d 'scope=openid demo.read' "$base/oidc/token" | json_field refresh_token) \
        || die "glewlwyd: no refresh token for alice"
    form_file "$dir/refresh.form" grant_type=refresh_token client_id=bench client_secret=Bench-secret-2026 "refresh_token=$rt"
    form_file "$dir/cc.form" grant_type=client_credentials client_id=bench client_secret=Bench-secret-2026 scope=demo.read
    for f in refresh cc; do
        status=$(curl -sk -o /dev/null -w '%{http_code}' --data-binary @"$dir/$f.form" "$base/oidc/token")
        [[ $status == 200 ]] || die "glewlwyd answered the $f grant with HTTP $status"
    done
    read -r r rb re < <(measure "$base/oidc/token" "$dir/refresh.form")
    read -r c cb ce < <(measure "$base/oidc/token" "$dir/cc.form")
    results+=("glewlwyd $(dpkg-query -W -f='${Version}' glewlwyd 2>/dev/null)|$r|$((rb + re))|$c|$((cb + ce))")
}

# --- IdentityPython's OP
idpyoidc_peer() {
    if [[ ! -x $VENV/bin/python ]] || ! "$VENV/bin/python" -c 'import idpyoidc, waitress' 2>/dev/null; then
        note "making $VENV with idpyoidc and waitress from PyPI…"
        "$PY" -m venv "$VENV" >&2 || { say "idpyoidc: no venv (python3-venv); not measured"; return; }
        "$VENV/bin/pip" install --quiet --disable-pip-version-check 'idpyoidc>=5,<6' 'waitress>=3' >&2 \
            || { say "idpyoidc: pip could not install it; not measured"; return; }
    fi
    local dir=$BENCH_TMP/idpyoidc port
    mkdir -p "$dir"
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$VENV/bin/python" "$BENCH_DIR/peer_idpy.py" "$dir" "$port" >"$dir/run.out" 2>&1 &
    EMU_PIDS+=($!)
    local i
    for ((i = 0; i < 300; i++)); do [[ -s $dir/ready ]] && break; sleep 0.1; done
    [[ -s $dir/ready ]] || { cat "$dir/run.out" >&2; die "idpyoidc's OP did not start"; }
    local url
    url=$(sed -n 1p "$dir/ready")
    for f in refresh cc; do
        status=$(curl -sk -o /dev/null -w '%{http_code}' --data-binary @"$dir/$f.form" "$url")
        [[ $status == 200 ]] || die "idpyoidc answered the $f grant with HTTP $status: $(curl -sk --data-binary @"$dir/$f.form" "$url")"
    done
    read -r r rb re < <(measure "$url" "$dir/refresh.form")
    read -r c cb ce < <(measure "$url" "$dir/cc.form")
    results+=("idpyoidc $("$VENV/bin/python" -c 'import idpyoidc; print(idpyoidc.__version__)')|$r|$((rb + re))|$c|$((cb + ce))")
}

for peer in $PEERS; do "${peer}_peer"; done

machine_line
say "load: wrk, $CONNECTIONS connections, $THREADS thread(s), ${DURATION} s per figure, TLS on loopback, RS256 2048-bit keys"
say "emulator: refresh $emu_refresh/s (non-200 $((emu_refresh_bad + emu_refresh_err))), client credentials $emu_cc/s (non-200 $((emu_cc_bad + emu_cc_err)))"
for line in "${results[@]}"; do
    IFS='|' read -r name r rbad c cbad <<<"$line"
    say "$name: refresh $r/s (non-200 $rbad), client credentials $c/s (non-200 $cbad)"
    # A figure with non-200 answers on either side is no figure.
    judge() { if (($2 + $3 > 0)); then echo "INVALID (non-200 answers)"; else verdict "$1" 1 ge; fi; }
    printf 'refresh grants/s: emulator %s  peer %s %s  ratio %sx  target >= 1x  %s\n' "$emu_refresh" "$name" "$r" \
        "$(ratio "$emu_refresh" "$r")" "$(judge "$(ratio "$emu_refresh" "$r")" "$rbad" "$((emu_refresh_bad + emu_refresh_err))")"
    printf 'client-credentials grants/s: emulator %s  peer %s %s  ratio %sx  target >= 1x  %s\n' "$emu_cc" "$name" "$c" \
        "$(ratio "$emu_cc" "$c")" "$(judge "$(ratio "$emu_cc" "$c")" "$cbad" "$((emu_cc_bad + emu_cc_err))")"
done
exit 0
