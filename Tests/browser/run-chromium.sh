#!/usr/bin/env bash
# Real-browser end-to-end test: the built b2c against a TLS emulator, with headless Chromium (driven by
# Tests/browser/chromium_agent.py through chromedriver) as $BROWSER.
#
# Usage: bash Tests/browser/run-chromium.sh
#   B2C_BIN                       the b2c binary (default .build/debug/b2c)
#   B2C_CHROMIUM_SCREENSHOT_OUT   where to copy the screenshot of the emulator's sign-in page (optional),
#                                 e.g. docs/images/emulator-signin.png
#   B2C_BROWSER_VENV              the Python venv with selenium (default .build/venv-browser; made on first use)
#   B2C_KEEP_TMP=1                keep the temporary directory (logs, emulator state, Chromium profile)
#   B2C_CUSTOM_POLICIES           a folder of custom policies for step (p) (default: the example set that
#                                 `b2c emulator example-policies` writes); e.g. Microsoft's starter pack with its
#                                 placeholders filled (docs/emulator.md, "Custom policies")
# Exit status: 0 all steps passed, 1 a step failed, 77 Chromium/chromedriver/certutil are not installed.
set -uo pipefail

screenshot_out=${B2C_CHROMIUM_SCREENSHOT_OUT:-}
if [ -n "$screenshot_out" ] && [ "${screenshot_out#/}" = "$screenshot_out" ]; then screenshot_out="$PWD/$screenshot_out"; fi
b2c=${B2C_BIN:-.build/debug/b2c}
if [ "${b2c#/}" = "$b2c" ]; then b2c="$PWD/$b2c"; fi
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
root=$PWD

for tool in chromium chromedriver certutil; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (Debian packages: chromium chromium-driver libnss3-tools)"
    exit 77
  fi
done
if [ ! -x "$b2c" ]; then
  echo "error: no b2c binary at $b2c (build it, or set B2C_BIN)" >&2
  exit 1
fi

source "$here/selenium-venv.sh"

started=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/b2c-chromium.XXXXXX")
# Nothing inherited may steer b2c or the agent: this run sets what it needs.
for v in $(compgen -e | grep -E '^(B2C_AGENT_|B2C_CHROMIUM_)'); do unset "$v"; done
unset B2C_CLOCK_OFFSET
export B2C_CONFIG="$tmp/policies.json" B2C_HOME="$tmp/home" B2C_CHROMIUM_PROFILE="$tmp/chromium-profile"
# The store is encrypted with a key from the environment, as on a CI machine without a key store.
B2C_STORE_KEY=$(head -c 32 /dev/urandom | base64) && export B2C_STORE_KEY
# b2c runs `sh -c 'exec $BROWSER "$1"'`: quote the paths for that shell.
export BROWSER="'$venv/bin/python' '$here/chromium_agent.py'"

emulator_pid=
cleanup() {
  # The agent's --shutdown waits for an agent still at work, then stops the Chromium it started.
  [ -d "$B2C_CHROMIUM_PROFILE" ] && "$venv/bin/python" "$here/chromium_agent.py" --shutdown 2>/dev/null
  if [ -n "$emulator_pid" ]; then kill "$emulator_pid" 2>/dev/null; wait "$emulator_pid" 2>/dev/null; fi
  if [ -n "${upstream_pid:-}" ]; then kill "$upstream_pid" 2>/dev/null; wait "$upstream_pid" 2>/dev/null; fi
  if [ -n "${hooks_pid:-}" ]; then kill -KILL "$hooks_pid" 2>/dev/null; wait "$hooks_pid" 2>/dev/null; fi
  if [ "${B2C_KEEP_TMP:-}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The emulator prints one line when it is ready:
# "b2c emulator: https://127.0.0.1:PORT tenant ...; admin ...; CA /path/ca.pem"
# The default tenant, with two more user flows: MFA by phone and by an authenticator app.
"$b2c" emulator default-seed >"$tmp/default-seed.json" || { echo "not ok - b2c emulator default-seed"; exit 1; }
# A second tenant, on plain http, is an OpenID Connect provider of the first (step n): its web app may answer to the
# first tenant's authresp, on a port chosen now.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$tmp/default-seed.json" "$tmp/upstream-seed.json" "$port" <<'PY'
import json, sys
seed = json.load(open(sys.argv[1]))
seed["users"] = [{"oid": "0c0c0000-5eed-4c0c-8000-000000000c0c", "email": "uma@upstream.test", "password": "Uma-dev-2026!",
                  "displayName": "Uma Up", "givenName": "Uma", "surname": "Up"}]
for app in seed["apps"]:
    if app.get("name") == "web-app":
        app["redirectUris"].append({"uri": f"https://127.0.0.1:{sys.argv[3]}/contoso.onmicrosoft.com/oauth2/authresp", "type": "web"})
json.dump(seed, open(sys.argv[2], "w"))
PY
"$b2c" emulator serve --seed "$tmp/upstream-seed.json" --state "$tmp/upstream-state" --port 0 \
  >"$tmp/upstream.out" 2>"$tmp/upstream.err" &
upstream_pid=$!
upstream=
for _ in $(seq 1 200); do
  upstream=$(sed -n 's/^b2c emulator: \(http:[^ ]*\) .*/\1/p' "$tmp/upstream.out" 2>/dev/null | head -n 1)
  [ -n "$upstream" ] && break
  sleep 0.1
done
# The developer's code in the journey (step o): an API connector endpoint and a page layout host, in Python's standard
# library, on a port chosen now.
hooks_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/hooks.py" <<'PY'
import json, signal, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the test runner hands SIGTERM down ignored; cleanup's kill must stop it
LAYOUT = ('<!DOCTYPE html><html><head><title>Contoso hooks layout</title></head>'
          '<body><header id="contoso-brand">Contoso</header><div id="api" role="main"></div></body></html>')


class Hooks(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="application/json"):
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(200, LAYOUT, "text/html") if self.path == "/layout.html" else self.reply(404, {})

    def do_POST(self):
        claims = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if claims["step"] != "PostAttributeCollection":
            return self.reply(200, {"version": "1.0.0", "action": "Continue", "extension_Tier": "gold"})
        if claims["email"].startswith("blocked"):
            return self.reply(200, {"version": "1.0.0", "action": "ShowBlockPage",
                                    "userMessage": "Sign-ups from this address are closed."})
        loyalty = next((v for k, v in claims.items() if k.endswith("_LoyaltyId")), "")
        if not loyalty.startswith("L-"):
            return self.reply(400, {"version": "1.0.0", "status": 400, "action": "ValidationError",
                                    "userMessage": "Loyalty numbers start with L-."})
        self.reply(200, {"version": "1.0.0", "action": "Continue"})


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hooks).serve_forever()
PY
python3 "$tmp/hooks.py" "$hooks_port" 2>"$tmp/hooks.err" &
hooks_pid=$!
python3 - "$tmp/default-seed.json" "$tmp/seed.json" "$upstream" "http://127.0.0.1:$hooks_port" <<'PY'
import json, sys
seed = json.load(open(sys.argv[1]))
web = next(a for a in seed["apps"] if a.get("name") == "web-app")
seed["policies"].append({"id": "B2C_1_oidc", "kind": "signUpSignIn", "identityProviders": ["local", {
    "type": "oidc", "id": "Upstream", "name": "Upstream tenant", "domainHint": "upstream.test",
    "discovery": sys.argv[3] + "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration",
    "clientId": web["clientId"], "clientSecret": web["secrets"][0]["value"]}]})
for name, method in (("B2C_1_susi_phone", "phone"), ("B2C_1_susi_totp", "totp")):  # B2C_1_susi_social is the default's
    seed["policies"].append({"id": name, "kind": "signUpSignIn", "mfa": {"methods": [method], "enforcement": "always"}})
seed["policies"].append({"id": "B2C_1_kmsi", "kind": "signUpSignIn", "kmsi": {"enabled": True, "days": 30}})
seed["policies"].append({"id": "B2C_1_loyalty", "kind": "signUpSignIn", "attributes": [
    "givenName", "surname", {"name": "extension_LoyaltyId", "type": "String", "required": True, "label": "Loyalty number"},
    {"name": "extension_Newsletter", "type": "Boolean", "label": "Send me news"}]})
seed["policies"].append({"id": "B2C_1_signup_dc", "kind": "signUpSignIn", "emailVerification": "displayControl"})
hooks = sys.argv[4]
seed["policies"].append({"id": "B2C_1_hooks", "kind": "signUpSignIn", "emailVerification": False, "attributes": [
    "givenName", "surname", {"name": "extension_LoyaltyId", "type": "String", "required": True, "label": "Loyalty number"}],
    "apiConnectors": {"postAttributeCollection": {"url": hooks + "/attributes"}, "preTokenIssuance": {"url": hooks + "/token"}},
    "pageLayouts": {"unifiedssp": hooks + "/layout.html", "selfasserted": hooks + "/layout.html"}})
json.dump(seed, open(sys.argv[2], "w"))
PY
# The custom policies of step (p).
custom_policies=${B2C_CUSTOM_POLICIES:-$tmp/custom-policies}
[ -n "${B2C_CUSTOM_POLICIES:-}" ] || "$b2c" emulator example-policies "$custom_policies" >/dev/null \
  || { echo "not ok - b2c emulator example-policies"; exit 1; }
"$b2c" emulator serve --tls --seed "$tmp/seed.json" --state "$tmp/state" --config-out "$B2C_CONFIG" --port "$port" \
  --custom-policies "$custom_policies" \
  >"$tmp/emulator.out" 2>"$tmp/emulator.err" &
emulator_pid=$!
base= ca=
for _ in $(seq 1 200); do
  line=$(head -n 1 "$tmp/emulator.out" 2>/dev/null)
  base=$(sed -n 's/^b2c emulator: \(https:[^ ]*\) .*/\1/p' <<<"$line")
  ca=$(sed -n 's/.*; CA \(.*\)$/\1/p' <<<"$line")
  [ -n "$base" ] && [ -n "$ca" ] && break
  kill -0 "$emulator_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$base" ] || [ -z "$ca" ]; then
  echo "not ok - the emulator did not start"
  sed 's/^/  # /' "$tmp/emulator.err" | tail -n 20
  exit 1
fi
export B2C_AGENT_CA="$ca"

failed=0
ok() { echo "ok - $1"; }
not_ok() {
  echo "not ok - $1"
  failed=$((failed + 1))
  # b2c's stderr (and with it the agent's); the authorize URLs are left out, tokens are never there.
  [ -n "${2:-}" ] && [ -f "$2" ] && grep -v '^  https://' "$2" | tail -n 15 | sed 's/^/  # /'
}

# b2c_run NAME ARGS...: runs b2c; stdout in $tmp/NAME.out, stderr in $tmp/NAME.err; returns its status.
b2c_run() {
  local name=$1
  shift
  "$b2c" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}

# account_check EMAIL POLICY [NAME]: does `b2c accounts --output json` list EMAIL with an account under
# POLICY (and, when given, the display name NAME)? Prints what it found when not.
account_check() {
  "$b2c" accounts --output json >"$tmp/accounts.json" 2>"$tmp/accounts.err" || { echo "b2c accounts failed"; return 1; }
  python3 - "$tmp/accounts.json" "$@" <<'PY'
import json, sys
path, email, policy = sys.argv[1:4]
name = sys.argv[4] if len(sys.argv) > 4 else None
people = json.load(open(path)).get("people", [])
person = next((p for p in people if p.get("email", "").lower() == email.lower()), None)
if person is None:
    sys.exit(f"{email} is not listed (people: {', '.join(p.get('email', '?') for p in people)})")
policies = [a.get("policy") for a in person.get("accounts", [])]
if policy not in policies:
    sys.exit(f"{email} has no {policy} account (policies: {', '.join(map(str, policies))})")
if name is not None and person.get("name") != name:
    sys.exit(f"{email} is named {person.get('name')!r}, not {name!r}")
PY
}

# ropc_status EMAIL PASSWORD: the HTTP status of a password grant at the emulator's ROPC policy (200 = accepted).
ropc_status() {
  local client
  client=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["clientId"])' "$B2C_CONFIG")
  curl -s -o /dev/null -w '%{http_code}' --cacert "$ca" "$base/contoso.onmicrosoft.com/B2C_1_ROPC_Auth/oauth2/v2.0/token" \
    --data-urlencode grant_type=password --data-urlencode "client_id=$client" --data-urlencode scope=openid \
    --data-urlencode "username=$1" --data-urlencode "password=$2"
}

# (a) alice signs in in the browser; the first page is captured.
shot="$tmp/emulator-signin.png"
why=
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' B2C_CHROMIUM_SCREENSHOT="$shot" \
  b2c_run a-signin signin --timeout 90
status=$?
if [ $status -eq 0 ] && grep -q 'Signed in as alice@contoso.com under B2C_1_susi' "$tmp/a-signin.out" \
  && why=$(account_check alice@contoso.com B2C_1_susi 2>&1); then
  ok "(a) alice signs in with Chromium; b2c accounts lists her under B2C_1_susi"
else
  not_ok "(a) alice signs in with Chromium (exit $status) ${why:-}" "$tmp/a-signin.err"
fi
if head -c 8 "$shot" 2>/dev/null | grep -q PNG; then
  ok "(a) screenshot of the emulator's sign-in page taken"
  if [ -n "$screenshot_out" ]; then
    mkdir -p "$(dirname "$screenshot_out")" && cp "$shot" "$screenshot_out" && chmod 644 "$screenshot_out"
  fi
else
  not_ok "(a) screenshot of the emulator's sign-in page taken" "$tmp/a-signin.err"
fi

# (b) bob forgot his password: b2c runs the reset policy in the same browser and resumes the sign-in.
why=
B2C_AGENT_ACTION=forgot B2C_AGENT_EMAIL=bob@contoso.com B2C_AGENT_PASSWORD='Bob-dev-2026!' B2C_AGENT_NEW_PASSWORD='Bob-new-2026!x' \
  b2c_run b-forgot signin --prompt login --timeout 90
status=$?
if [ $status -eq 0 ] && grep -q 'Password reset requested' "$tmp/b-forgot.err" \
  && grep -q 'Signed in as bob@contoso.com under B2C_1_susi' "$tmp/b-forgot.out" \
  && why=$(account_check bob@contoso.com B2C_1_susi 2>&1); then
  ok "(b) bob: forgot password -> reset with an emailed code -> resumed sign-in, in one b2c signin"
else
  not_ok "(b) bob: forgot password -> reset -> resumed sign-in (exit $status) ${why:-}" "$tmp/b-forgot.err"
fi
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=bob@contoso.com B2C_AGENT_PASSWORD='Bob-new-2026!x' \
  b2c_run b-again signin --prompt login --timeout 90
status=$?
old=$(ropc_status bob@contoso.com 'Bob-dev-2026!')
if [ $status -eq 0 ] && grep -q 'Signed in as bob@contoso.com under B2C_1_susi' "$tmp/b-again.out" && [ "$old" = 400 ]; then
  ok "(b) bob signs in again with the new password; the old one is refused"
else
  not_ok "(b) bob signs in again with the new password (exit $status); the old one is refused (HTTP $old)" "$tmp/b-again.err"
fi

# (c) alice edits her profile in the browser. (A b2c without the command answers --help with its overview.)
if ! "$b2c" edit-profile --help >"$tmp/edit-help.out" 2>&1 || ! grep -q 'USAGE: b2c edit-profile' "$tmp/edit-help.out"; then
  echo "SKIP edit-profile (command not built yet)"
else
  extra=()
  grep -q -- '--timeout' "$tmp/edit-help.out" && extra=(--timeout 90)
  why=
  B2C_AGENT_ACTION=edit-profile B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' \
  B2C_AGENT_DISPLAY_NAME='Alice Chromium' \
    b2c_run c-edit edit-profile --account alice@contoso.com "${extra[@]}"
  status=$?
  if [ $status -eq 0 ] && why=$(account_check alice@contoso.com B2C_1_susi 'Alice Chromium' 2>&1); then
    ok "(c) alice edits her profile; b2c accounts shows the name 'Alice Chromium'"
  else
    not_ok "(c) alice edits her profile (exit $status) ${why:-}" "$tmp/c-edit.err"
  fi
fi

# (d) the person cancels on the sign-in page: b2c exits 2.
B2C_AGENT_ACTION=cancel b2c_run d-cancel signin --prompt login --timeout 90
status=$?
if [ $status -eq 2 ]; then
  ok "(d) cancel on the sign-in page: b2c signin exits 2"
else
  not_ok "(d) cancel on the sign-in page: b2c signin exits 2 (got $status)" "$tmp/d-cancel.err"
fi

# (e) MFA by email: after her password, alice sends herself a code, types it from the outbox, and continues.
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' \
  b2c_run e-mfa-email signin --policy B2C_1_susi_mfa --prompt login --timeout 90 --verbose
status=$?
if [ $status -eq 0 ] && grep -q 'Signed in as alice@contoso.com under B2C_1_susi_mfa' "$tmp/e-mfa-email.out" \
  && grep -q 'MFA by email: entering the code' "$tmp/e-mfa-email.err"; then
  ok "(e) MFA by email (#ReadOnlyEmail_ver_but_send, #ReadOnlyEmail_ver_input, #ReadOnlyEmail_ver_but_verify, #continue)"
else
  not_ok "(e) MFA by email (exit $status)" "$tmp/e-mfa-email.err"
fi

# (f) MFA by phone: bob registers a number (#countryCode, #number, #sendCode), then the code by text (#verificationCode,
# #verifyCode); the next sign-in uses the number on record.
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=bob@contoso.com B2C_AGENT_PASSWORD='Bob-new-2026!x' B2C_AGENT_PHONE=+14255550123 \
  b2c_run f-phone signin --policy B2C_1_susi_phone --prompt login --timeout 90 --verbose
status=$?
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=bob@contoso.com B2C_AGENT_PASSWORD='Bob-new-2026!x' \
  b2c_run f-phone-again signin --policy B2C_1_susi_phone --prompt login --timeout 90 --verbose
again=$?
if [ $status -eq 0 ] && [ $again -eq 0 ] && grep -q 'registering +14255550123' "$tmp/f-phone.err" \
  && grep -q 'number on record' "$tmp/f-phone-again.err"; then
  ok "(f) MFA by phone: a number registered on first use, then the number on record"
else
  not_ok "(f) MFA by phone (exit $status, then $again)" "$tmp/f-phone.err"
fi

# (g) MFA by authenticator app: the QR code as Chromium draws it decodes (zbarimg) to the secret shown; then its codes.
if command -v zbarimg >/dev/null 2>&1; then qr=1; else qr=; echo "# zbarimg missing (zbar-tools): the QR code is not decoded"; fi
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' B2C_AGENT_QR_CHECK=$qr \
  b2c_run g-totp signin --policy B2C_1_susi_totp --prompt login --timeout 90 --verbose
status=$?
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' \
  b2c_run g-totp-again signin --policy B2C_1_susi_totp --prompt login --timeout 90 --verbose
again=$?
if [ $status -eq 0 ] && [ $again -eq 0 ] && { [ -z "$qr" ] || grep -q "decoded from Chromium's rendering" "$tmp/g-totp.err"; }; then
  ok "(g) MFA by authenticator app: registered by its QR code's secret, then asked for its code"
else
  not_ok "(g) MFA by authenticator app (exit $status, then $again)" "$tmp/g-totp.err"
fi

# (h) three wrong codes: the tenant ends the sign-in (AADB2C90151) and b2c says so.
B2C_AGENT_ACTION=wrong-codes B2C_AGENT_EMAIL=bob@contoso.com B2C_AGENT_PASSWORD='Bob-new-2026!x' \
  b2c_run h-wrong signin --policy B2C_1_susi_phone --prompt login --timeout 90
status=$?
if [ $status -eq 1 ] && grep -q 'AADB2C90151' "$tmp/h-wrong.err"; then
  ok "(h) three wrong phone codes: b2c signin exits 1 with AADB2C90151"
else
  not_ok "(h) three wrong phone codes: exit 1 with AADB2C90151 (got $status)" "$tmp/h-wrong.err"
fi

# (i) federation: #GoogleExchange on the unified page, the (mock) provider's page, the social sign-up page; then the
# returning person goes straight through.
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=carol@gmail.com B2C_AGENT_IDP_BUTTON=GoogleExchange B2C_AGENT_DISPLAY_NAME='Carol Gee' \
  b2c_run i-social signin --policy B2C_1_susi_social --prompt login --timeout 90 --verbose
status=$?
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=carol@gmail.com B2C_AGENT_IDP_BUTTON=GoogleExchange \
  b2c_run i-social-again signin --policy B2C_1_susi_social --prompt login --timeout 90 --verbose
again=$?
"$b2c" whoami --policy B2C_1_susi_social --output json >"$tmp/i-who.json" 2>/dev/null
if [ $status -eq 0 ] && [ $again -eq 0 ] && grep -Eq '"identityProvider" ?: ?"google.com"' "$tmp/i-who.json" \
  && grep -q 'submitting the profile' "$tmp/i-social.err" && ! grep -q 'submitting the profile' "$tmp/i-social-again.err"; then
  ok "(i) federation: #GoogleExchange, the provider's page, the social sign-up page once; idp google.com"
else
  not_ok "(i) federation (exit $status, then $again)" "$tmp/i-social.err"
fi

# (j) Keep me signed in across a browser restart: checked, the tenant's persistent cookie answers the next sign-in after
# Chromium restarts (no page); unchecked, the browser-session cookie is gone with the browser and the page comes back.
kmsi_run() {  # NAME [REMEMBER [PROMPT]]: a sign-in at B2C_1_kmsi by bob, then a restart of Chromium
  B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=bob@contoso.com B2C_AGENT_PASSWORD='Bob-new-2026!x' B2C_AGENT_REMEMBER_ME=${2:-} \
    b2c_run "$1" signin --policy B2C_1_kmsi --timeout 90 --verbose ${3:+--prompt "$3"}
  local status=$?
  "$venv/bin/python" "$here/chromium_agent.py" --shutdown 2>/dev/null
  return $status
}
kmsi_run j-kmsi-checked 1 login && kmsi_run j-kmsi-after && a=0 || a=1
grep -q "checking 'Keep me signed in'" "$tmp/j-kmsi-checked.err" && ! grep -q 'signing in as' "$tmp/j-kmsi-after.err" || a=1
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=bob@contoso.com B2C_AGENT_PASSWORD='Bob-new-2026!x' \
  b2c_run j-plain signin --policy B2C_1_kmsi --prompt login --timeout 90 --verbose \
  && "$venv/bin/python" "$here/chromium_agent.py" --shutdown 2>/dev/null
kmsi_run j-plain-after && grep -q 'signing in as' "$tmp/j-plain-after.err" && b=0 || b=1
if [ $a -eq 0 ] && [ $b -eq 0 ]; then
  ok "(j) keep me signed in: the session survives a browser restart only when #rememberMe was checked"
else
  not_ok "(j) keep me signed in across a browser restart (checked: $a, unchecked: $b)" "$tmp/j-kmsi-after.err"
fi

# (k) languages: --ui-locales fr gives the French page (the agent works by element ids, so it signs in all the same);
# without it, Chromium's Accept-Language (en-US here) gives English.
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' \
  b2c_run k-fr signin --prompt login --ui-locales fr --timeout 90 --verbose
status=$?
if [ $status -eq 0 ] && grep -q 'page language fr' "$tmp/k-fr.err" && grep -q 'page language en' "$tmp/j-plain.err"; then
  ok "(k) ui_locales=fr: <html lang=\"fr\">, signed in by element ids; Chromium's own language gives English"
else
  not_ok "(k) ui_locales=fr (exit $status)" "$tmp/k-fr.err"
fi

# (l) sign-up with email verification and a custom attribute: "Sign up now", the code from the outbox, the password, a
# required extension_LoyaltyId and a checkbox; the id token carries both extension claims.
B2C_AGENT_ACTION=signup B2C_AGENT_EMAIL=erin@contoso.com B2C_AGENT_PASSWORD='Erin-dev-2026!' B2C_AGENT_GIVEN_NAME=Erin \
  B2C_AGENT_SURNAME=Ek B2C_AGENT_ATTRIBUTES='extension_LoyaltyId=L-77;extension_Newsletter=true' \
  b2c_run l-signup signin --policy B2C_1_loyalty --prompt login --timeout 90 --verbose
status=$?
claims=$("$b2c" whoami --policy B2C_1_loyalty --output json 2>/dev/null)
if [ $status -eq 0 ] && grep -q 'sign-up: entering the code from the outbox' "$tmp/l-signup.err" \
  && grep -q '"extension_LoyaltyId" *: *"L-77"' <<<"$claims" && grep -q '"extension_Newsletter" *: *true' <<<"$claims"; then
  ok "(l) sign-up in Chromium: email verified with the outbox's code, extension attributes in the id token (b2c whoami)"
else
  seen=$(grep -o "\"extension_[A-Za-z]*\" *: *[^,]*" <<<"$claims" | tr "\n" " ")
  not_ok "(l) sign-up with verification and a custom attribute (exit $status) $seen" "$tmp/l-signup.err"
fi

# (m) the display-control variant: #emailVerificationControl_but_send_code, #verificationCode,
# #emailVerificationControl_but_verify_code, then the account.
B2C_AGENT_ACTION=signup B2C_AGENT_EMAIL=frank@contoso.com B2C_AGENT_PASSWORD='Frank-dev-2026!' B2C_AGENT_DISPLAY_NAME='Frank F' \
  b2c_run m-signup signin --policy B2C_1_signup_dc --prompt login --timeout 90 --verbose
status=$?
if [ $status -eq 0 ] && grep -q 'emailVerificationControl_but_send_code' "$tmp/m-signup.err" \
  && grep -q 'entering the code from the outbox (#verificationCode)' "$tmp/m-signup.err" \
  && why=$(account_check frank@contoso.com B2C_1_signup_dc 2>&1); then
  ok "(m) sign-up through the display control (#emailVerificationControl_but_*, #verificationCode)"
else
  not_ok "(m) sign-up through the display control (exit $status) ${why:-}" "$tmp/m-signup.err"
fi

# (n) a second b2c-emulator as a generic OpenID Connect provider: #UpstreamExchange, the other tenant's sign-in page, back
# through authresp (the first tenant redeems the code and checks the id token), the social sign-up page the first time;
# returning, by domain_hint, straight on. idp is the other tenant's issuer.
B2C_AGENT_IDP_BUTTON=UpstreamExchange B2C_AGENT_EMAIL=uma@upstream.test B2C_AGENT_PASSWORD='Uma-dev-2026!' \
  b2c_run n-oidc signin --policy B2C_1_oidc --prompt login --timeout 90 --verbose
status=$?
idp=$("$b2c" whoami --policy B2C_1_oidc --output json 2>/dev/null \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["identityProvider"])' 2>/dev/null)
B2C_AGENT_EMAIL=uma@upstream.test B2C_AGENT_PASSWORD='Uma-dev-2026!' \
  b2c_run n-oidc-again signin --policy B2C_1_oidc --prompt login --domain-hint upstream.test --timeout 90 --verbose
again=$?
if [ $status -eq 0 ] && [ $again -eq 0 ] && [ "$idp" = "$upstream/8f2c6d4e-1a3b-4c5d-9e7f-0a1b2c3d4e5f/v2.0/" ] \
  && grep -q "pressing #UpstreamExchange" "$tmp/n-oidc.err" && grep -q "signing in as uma@upstream.test" "$tmp/n-oidc.err"; then
  ok "(n) a second b2c-emulator as an OpenID Connect provider: first time and returning (domain_hint); idp is its issuer"
else
  not_ok "(n) OpenID Connect provider (exit $status, then $again; idp '$idp')" "$tmp/n-oidc.err"
fi

# (o) the developer's code in the journey, on the developer's page layout: the API connector refuses gina's loyalty number
# (ValidationError, shown in #claimVerificationServerError), she corrects it, the account is made, and the token
# connector's claim is in her tokens; a blocked address ends on the block page.
B2C_AGENT_ACTION=signup B2C_AGENT_EMAIL=gina@contoso.com B2C_AGENT_PASSWORD='Gina-dev-2026!' B2C_AGENT_GIVEN_NAME=Gina \
  B2C_AGENT_SURNAME=Gee B2C_AGENT_ATTRIBUTES='extension_LoyaltyId=X-1' B2C_AGENT_CORRECTED_ATTRIBUTES='extension_LoyaltyId=L-9' \
  b2c_run o-hooks signin --policy B2C_1_hooks --prompt login --timeout 90 --verbose
status=$?
claims=$("$b2c" whoami --policy B2C_1_hooks --output json 2>/dev/null)
if [ $status -eq 0 ] && grep -q "title 'Contoso hooks layout'" "$tmp/o-hooks.err" \
  && grep -q "the page says 'Loyalty numbers start with L-.'; correcting" "$tmp/o-hooks.err" \
  && grep -q '"extension_Tier" *: *"gold"' <<<"$claims" && grep -q '"extension_LoyaltyId" *: *"L-9"' <<<"$claims"; then
  ok "(o) on a custom layout: a connector's validation error corrected, then its token claim (extension_Tier) in the tokens"
else
  not_ok "(o) API connectors on a custom layout (exit $status)" "$tmp/o-hooks.err"
fi
B2C_AGENT_ACTION=signup B2C_AGENT_EMAIL=blocked@contoso.com B2C_AGENT_PASSWORD='Blocked-dev-2026!' \
  B2C_AGENT_ATTRIBUTES='extension_LoyaltyId=L-1' b2c_run o-blocked signin --policy B2C_1_hooks --prompt login --timeout 15 --verbose
status=$?
if [ $status -ne 0 ] && grep -q 'blocked: Sign-ups from this address are closed.' "$tmp/o-blocked.err"; then
  ok "(o) a connector's ShowBlockPage: the block page's message in #claimVerificationServerError, no way on"
else
  not_ok "(o) a connector's block page (exit $status)" "$tmp/o-blocked.err"
fi

# (p) a custom policy's journey (the Identity Experience Framework's XML) in Chromium: its unified page (#signInName),
# the password checked by its login-NonInteractive profile, then a refresh through its RedeemRefreshToken journey.
# (The phone is for Microsoft's MFA pack, which enrols one at the first sign-in; a starter pack's local sign-in token has no
# email claim, so b2c names the person otherwise.)
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' B2C_AGENT_PHONE=+15555550142 \
  b2c_run p-custom signin --policy B2C_1A_signup_signin --prompt login --timeout 90 --verbose
status=$?
b2c_run p-refresh token --policy B2C_1A_signup_signin --force-refresh
refreshed=$?
if [ $status -eq 0 ] && grep -q 'Signed in as .* under B2C_1A_signup_signin' "$tmp/p-custom.out" \
  && grep -q "signing in as alice@contoso.com" "$tmp/p-custom.err" && [ $refreshed -eq 0 ]; then
  ok "(p) a custom policy ($(basename "$custom_policies")) in Chromium: sign-in, then a refresh through its token journey"
else
  not_ok "(p) a custom policy in Chromium (exit $status, refresh $refreshed)" "$tmp/p-custom.err"
fi
# Its profile edit: B2C_1A_ProfileEdit's page in the same browser, answered by the SSO session, the given name written.
# (The packs' profile page asks the given name and surname, not the display name.)
B2C_AGENT_ACTION=edit-profile B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' \
  B2C_AGENT_GIVEN_NAME=Alicia b2c_run p-edit edit-profile --policy B2C_1A_ProfileEdit --timeout 90 --verbose
status=$?
if [ $status -eq 0 ] && grep -q "submitting the profile (givenName)" "$tmp/p-edit.err" \
  && ! grep -q "signing in as" "$tmp/p-edit.err"; then
  ok "(p) the custom policy's profile edit (B2C_1A_ProfileEdit) in Chromium, without a second sign-in"
else
  not_ok "(p) the custom policy's profile edit (exit $status)" "$tmp/p-edit.err"
fi

# A sign-up through the policy's own pages (its email verified with the outbox's code), and, where the folder has a
# Facebook profile (the social packs), a sign-up through the mock Facebook and the policy's social page.
B2C_AGENT_ACTION=signup B2C_AGENT_EMAIL=pia.custom@contoso.com B2C_AGENT_PASSWORD='Pia-dev-2026!x' B2C_AGENT_DISPLAY_NAME='Pia Custom' \
  B2C_AGENT_GIVEN_NAME=Pia B2C_AGENT_SURNAME=Custom B2C_AGENT_PHONE=+15555550143 \
  b2c_run p-signup signin --policy B2C_1A_signup_signin --prompt login --timeout 90 --verbose
status=$?
if [ $status -eq 0 ] && grep -q "sign-up: entering the code from the outbox" "$tmp/p-signup.err" \
  && grep -q "sign-up: creating the account" "$tmp/p-signup.err"; then
  ok "(p) sign-up through the custom policy's pages in Chromium, the email verified with the outbox's code"
else
  not_ok "(p) sign-up through the custom policy (exit $status)" "$tmp/p-signup.err"
fi
# "Forgot your password?" on the policy's sign-in page: AADB2C90118 to b2c, which runs the custom reset policy
# (B2C_1A_PasswordReset: the address verified with the outbox's code, then the new password) and resumes the sign-in (the
# session the reset made answers it); a sign-in with --prompt login then takes the new password. The account is the one
# just signed up (Bob's password was reset in step b).
B2C_AGENT_ACTION=forgot B2C_AGENT_EMAIL=pia.custom@contoso.com B2C_AGENT_PASSWORD='Pia-dev-2026!x' \
  B2C_AGENT_NEW_PASSWORD='Pia-new-2026!x' B2C_AGENT_PHONE=+15555550143 \
  b2c_run p-reset signin --policy B2C_1A_signup_signin --prompt login --timeout 120 --verbose
status=$?
B2C_AGENT_ACTION=signin B2C_AGENT_EMAIL=pia.custom@contoso.com B2C_AGENT_PASSWORD='Pia-new-2026!x' B2C_AGENT_PHONE=+15555550143 \
  b2c_run p-reset-signin signin --policy B2C_1A_signup_signin --prompt login --timeout 90 --verbose
again=$?
if [ $status -eq 0 ] && grep -q 'Password reset requested: running B2C_1A_PasswordReset' "$tmp/p-reset.err" \
  && grep -q "password reset: choosing the new password" "$tmp/p-reset.err" && [ $again -eq 0 ] \
  && grep -q "signing in as pia.custom@contoso.com" "$tmp/p-reset-signin.err"; then
  ok "(p) password reset through the custom policy (B2C_1A_PasswordReset) in Chromium, then a sign-in with the new password"
else
  not_ok "(p) password reset through the custom policy (exit $status, then $again)" "$tmp/p-reset.err"
fi
# (The example set's social relying party is B2C_1A_signup_signin_social_mfa; a social starter pack's is B2C_1A_signup_signin.)
social=
if grep -q 'PolicyId="B2C_1A_signup_signin_social_mfa"' "$custom_policies"/*.xml; then social=B2C_1A_signup_signin_social_mfa
elif grep -q '<ClaimsExchange Id="FacebookExchange"' "$custom_policies"/*.xml; then social=B2C_1A_signup_signin; fi
if [ -n "$social" ]; then
  B2C_AGENT_IDP_BUTTON=FacebookExchange B2C_AGENT_EMAIL=fay.custom@facebook.example B2C_AGENT_DISPLAY_NAME='Fay Book' \
    B2C_AGENT_PHONE=+15555550144 b2c_run p-facebook signin --policy "$social" --prompt login --timeout 90 --verbose
  status=$?
  if [ $status -eq 0 ] && grep -q "pressing #FacebookExchange" "$tmp/p-facebook.err"; then
    ok "(p) Facebook through the tenant's mock provider and $social's social page, in Chromium"
  else
    not_ok "(p) Facebook through the custom policy (exit $status)" "$tmp/p-facebook.err"
  fi
fi
echo "# $([ $failed -eq 0 ] && echo 'all passed' || echo "$failed failed") in $(($(date +%s) - started)) s"
[ $failed -eq 0 ]
