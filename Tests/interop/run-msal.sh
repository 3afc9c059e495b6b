#!/usr/bin/env bash
# Runs the msal interoperability script in its own venv (made on first use).
# Usage: Tests/interop/run-msal.sh BASE_URL CA_FILE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="${B2C_TEST_VENV:-$here/../../.build/venv-interop}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import msal, requests, jwt, cryptography' 2>/dev/null; then
  # The machine's global REQUESTS_CA_BUNDLE must not stop pip reaching PyPI.
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check msal requests 'pyjwt[crypto]' >&2
fi
exec "$venv/bin/python" "$here/msal_interop.py" "$@"
