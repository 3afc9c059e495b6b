#!/usr/bin/env bash
# How the local tenant's pages look, with no layout and in each built-in layout, in headless Chromium
# (Tests/browser/page_looks.py; the reference sizes and positions are in Tests/browser/page_looks.json).
# Usage: bash Tests/browser/run-page-looks.sh B2C_EMULATOR_BINARY [--update]
#   B2C_PAGE_LOOKS_OUT=DIR   keep the screenshots there
# Exit status: 0 passed, 1 a check failed, 77 Chromium/chromedriver are not installed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (Debian packages: chromium chromium-driver)"; exit 77; }
done
source "$here/selenium-venv.sh"
exec "$venv/bin/python" "$here/page_looks.py" "$@"
