#!/usr/bin/env bash
# The store's key in a real Secret Service: gnome-keyring-daemon on a private D-Bus session bus (headless), unlocked
# with a test password; b2c signs in with the scripted agent as $BROWSER against a TLS emulator.
#
# Usage: bash Tests/keyring/run-keyring.sh B2C_BINARY AGENT_BINARY
# Exit status: 0 all passed, 1 a check failed, 77 dbus / gnome-keyring / secret-tool are not installed.
set -uo pipefail
# A test runner may start us with signals blocked (Foundation's Process passes its mask on); dbus-run-session could then
# not stop its bus, which holds our output open. Start again with no signal blocked.
if [ -z "${B2C_KEYRING_UNBLOCKED:-}" ]; then
  export B2C_KEYRING_UNBLOCKED=1
  exec python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])' bash "$0" "$@"
fi
b2c=$1 agent=$2
for tool in dbus-run-session gnome-keyring-daemon secret-tool; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (Debian packages: dbus gnome-keyring libsecret-tools)"; exit 77; }
done

# Everything the bus and the keyring daemon touch lives in a sandbox: set before dbus-run-session, which passes its
# environment on to the services it starts.
sandbox=$(mktemp -d "${TMPDIR:-/tmp}/b2c-keyring.XXXXXX")
trap 'rm -rf "$sandbox"' EXIT
mkdir -p "$sandbox/runtime" && chmod 700 "$sandbox/runtime"
for v in $(compgen -e | grep -E '^B2C_' | grep -v B2C_KEYRING_UNBLOCKED); do unset "$v"; done
export HOME="$sandbox" XDG_DATA_HOME="$sandbox/data" XDG_CONFIG_HOME="$sandbox/config" XDG_CACHE_HOME="$sandbox/cache" \
  XDG_RUNTIME_DIR="$sandbox/runtime" B2C="$b2c" BROWSER="$agent" B2C_HOME="$sandbox/store" B2C_CONFIG="$sandbox/policies.json" \
  B2C_AGENT_JAR="$sandbox/jar.json" B2C_AGENT_EMAIL=alice@contoso.com B2C_AGENT_PASSWORD='Alice-dev-2026!' SANDBOX="$sandbox"

dbus-run-session -- bash -c '
  failed=0
  ok() { echo "ok - $1"; }
  not_ok() { echo "not ok - $1"; failed=$((failed + 1)); [ -n "${2:-}" ] && tail -n 5 "$2" | sed "s/^/  # /"; }
  printf %s keyring-test-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
  "$B2C" emulator serve --tls --state "$SANDBOX/tenant" --config-out "$B2C_CONFIG" --port 0 >"$SANDBOX/emulator.out" 2>&1 &
  emulator=$!
  trap "kill $emulator 2>/dev/null" EXIT
  for _ in $(seq 100); do grep -q "CA " "$SANDBOX/emulator.out" 2>/dev/null && break; sleep 0.1; done
  export B2C_AGENT_CA=$(sed -n "s/.*; CA \(.*\)$/\1/p" "$SANDBOX/emulator.out")

  # 1. A sign-in with no B2C_STORE_KEY: the key is made in the Secret Service.
  if "$B2C" signin >"$SANDBOX/signin.out" 2>"$SANDBOX/signin.err" && "$B2C" config get -o json >"$SANDBOX/get.json"; then
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d[\"keySource\"]==\"secret-service\" and d[\"storage\"]==\"encrypted\" else 1)" "$SANDBOX/get.json" \
      && ok "the store is encrypted with a key made in the Secret Service" || not_ok "key source: $(cat "$SANDBOX/get.json")"
  else
    not_ok "sign-in with gnome-keyring" "$SANDBOX/signin.err"
  fi
  store_id=$(sqlite3 "$B2C_HOME/store.sqlite" "SELECT value FROM settings WHERE key = \"store_id\"")
  key_id=$(sqlite3 "$B2C_HOME/store.sqlite" "SELECT value FROM settings WHERE key = \"key_id\"")
  # 2. libsecret reads the item b2c wrote (32 bytes).
  size=$(secret-tool lookup application b2c b2c-store "$store_id" b2c-key "$key_id" | wc -c)
  [ "$size" = 32 ] && ok "secret-tool (libsecret) reads the 32-byte key b2c stored" || not_ok "secret-tool lookup gave $size bytes"
  # 3. No token in the store files.
  "$B2C" export --format msal --stdout >"$SANDBOX/export.json" 2>/dev/null
  python3 - "$SANDBOX/export.json" "$B2C_HOME" <<PY && ok "no token in the store files" || not_ok "a token is in the store files"
import json, sys, os
cache = json.load(open(sys.argv[1]))
raw = b"".join(open(os.path.join(sys.argv[2], "store.sqlite" + s), "rb").read() for s in ("", "-wal", "-shm") if os.path.exists(os.path.join(sys.argv[2], "store.sqlite" + s)))
secrets = [e["secret"] for sec in ("AccessToken", "RefreshToken", "IdToken") for e in cache.get(sec, {}).values()]
sys.exit(0 if secrets and not any(s.encode() in raw for s in secrets) else 1)
PY
  # 4. The unwrapped key is cached in the kernel keyring for the next commands.
  "$B2C" token >/dev/null 2>&1
  grep -q "b2c:store-key:$store_id:$key_id" /proc/keys && ok "the key is cached in the kernel user keyring" || not_ok "no cached key in /proc/keys"
  # 4b. The fast path of b2c (a repeated cache hit, answered without the full client) opens the store with that cached key,
  # answers as the full client does, and hands over once the cache is gone (`config lock`).
  "$B2C" token -o json >/dev/null 2>&1
  B2C_FAST_PATH=require "$B2C" token -o json >"$SANDBOX/fast.out" 2>"$SANDBOX/fast.err"; fast=$?
  "$(dirname "$B2C")/b2c-client" token -o json >"$SANDBOX/full.out" 2>&1
  "$B2C" config lock >/dev/null
  B2C_FAST_PATH=require "$B2C" token -o json >/dev/null 2>"$SANDBOX/locked-fast.err"; handed=$?
  [ $fast = 0 ] && [ -s "$SANDBOX/fast.out" ] && [ ! -s "$SANDBOX/fast.err" ] && cmp -s "$SANDBOX/fast.out" "$SANDBOX/full.out" && [ $handed = 70 ] \
    && ok "the fast path opens the store with the kernel-keyring key, answers as the full client, and hands over after config lock" \
    || not_ok "fast path with the kernel-keyring key: exit $fast, after lock $handed" "$SANDBOX/fast.err"
  # 5. Without the cache and without the bus: refused, with the source it needs, and nothing altered.
  "$B2C" config lock >/dev/null
  before=$(sqlite3 "$B2C_HOME/store.sqlite" "SELECT hex(secret) FROM access_tokens; SELECT hex(secret) FROM refresh_tokens")
  env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=/nonexistent "$B2C" token >"$SANDBOX/nobus.out" 2>"$SANDBOX/nobus.err"
  status=$?
  after=$(sqlite3 "$B2C_HOME/store.sqlite" "SELECT hex(secret) FROM access_tokens; SELECT hex(secret) FROM refresh_tokens")
  [ $status = 3 ] && grep -q "Secret Service" "$SANDBOX/nobus.err" && grep -q "Nothing was altered" "$SANDBOX/nobus.err" && [ "$before" = "$after" ] \
    && ok "without the session bus: refused (exit 3), the Secret Service named, the store unchanged" || not_ok "no bus: exit $status" "$SANDBOX/nobus.err"
  # 6. With the bus again it works, and a key rotation keeps it working with a new key.
  "$B2C" token >/dev/null 2>&1 && ok "with the bus again the token is served" || not_ok "token after the bus came back"
  "$B2C" config rotate-key >/dev/null 2>"$SANDBOX/rotate.err"
  new_id=$(sqlite3 "$B2C_HOME/store.sqlite" "SELECT value FROM settings WHERE key = \"key_id\"")
  old_left=$(secret-tool lookup application b2c b2c-store "$store_id" b2c-key "$key_id" | wc -c)
  [ "$new_id" != "$key_id" ] && [ "$old_left" = 0 ] && "$B2C" config lock >/dev/null && "$B2C" token >/dev/null 2>&1 \
    && ok "rotate-key: a new key in the keyring, the old item removed, tokens still served" || not_ok "rotate-key ($key_id -> $new_id, old item $old_left bytes)" "$SANDBOX/rotate.err"
  # 7. A locked keyring is said, not waited on.
  dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.Secret.Service.Lock \
    array:objpath:/org/freedesktop/secrets/collection/login >/dev/null 2>&1
  "$B2C" config lock >/dev/null
  timeout 20 "$B2C" token >/dev/null 2>"$SANDBOX/locked.err"; status=$?
  [ $status = 3 ] && grep -qi "locked" "$SANDBOX/locked.err" && ok "a locked keyring: exit 3 at once, saying it is locked" || not_ok "locked keyring: exit $status" "$SANDBOX/locked.err"
  exit $failed
' 2>&1 | grep -v "Failed to set fd limit"
exit "${PIPESTATUS[0]}"
