#!/usr/bin/env bash
# What a script can do on the local tenant's pages, in headless Chromium (Tests/browser/page_policy.py).
# Usage: bash Tests/browser/run-page-policy.sh B2C_BINARY
# Exit status: 0 passed, 1 a check failed, 77 Chromium/chromedriver are not installed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (Debian packages: chromium chromium-driver)"; exit 77; }
done
source "$here/selenium-venv.sh"
exec "$venv/bin/python" "$here/page_policy.py" "$@"
