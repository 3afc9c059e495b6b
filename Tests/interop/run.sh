#!/usr/bin/env bash
# Runs one interoperability script (msal, PyJWT, Authlib, signxml) in a venv made on first use.
# Usage: Tests/interop/run.sh SCRIPT.py BASE_URL CA_FILE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="${B2C_TEST_VENV:-$here/../../.build/venv-interop}"
# Tests run in parallel: one of them makes the venv while the others wait.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
modules='import msal, requests, jwt, cryptography, authlib, msal_extensions, signxml'
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "$modules" 2>/dev/null; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check msal msal-extensions requests 'pyjwt[crypto]' authlib signxml >&2
fi
flock -u 9
script="$1"; shift
exec "$venv/bin/python" "$here/$script" "$@"
