#!/usr/bin/env bash
# Runs one interoperability script (msal, PyJWT, Authlib, signxml, joserfc; Microsoft's Graph SDK for graph_*.py) in a
# venv made on first use.
# Usage: Tests/interop/run.sh SCRIPT.py BASE_URL CA_FILE
#        Tests/interop/run.sh --prepare   makes every venv the tests use (.ci/run, beside the build) and exits
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --prepare ]; then
  "$0" --venv-only interop_x.py
  "$0" --venv-only graph_x.py
  (source "$here/../browser/selenium-venv.sh")
  exit 0
fi
venv_only=false
if [ "${1:-}" = --venv-only ]; then
  venv_only=true
  shift
fi
venv="${B2C_TEST_VENV:-$here/../../.build/venv-interop}"
modules='import msal, requests, jwt, cryptography, authlib, msal_extensions, signxml, joserfc'
packages=(msal msal-extensions requests 'pyjwt[crypto]' authlib signxml joserfc)
# Microsoft's Graph SDK is large (about 470 MB with its dependencies): a venv of its own, made only for its scripts.
case "$1" in
  graph_*)
    venv="$venv-graph"
    modules='import msal, requests, msgraph'
    packages=(msal requests msgraph-sdk)
    ;;
esac
# Tests run in parallel: one of them makes the venv while the others wait.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "$modules" 2>/dev/null; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${packages[@]}" >&2
fi
flock -u 9
if $venv_only; then
  exit 0
fi
script="$1"; shift
exec "$venv/bin/python" "$here/$script" "$@"
