#!/usr/bin/env bash
# Runs one headless-Chromium check of Tests/browser/ (spa_cors.py, page_policy.py, page_looks.py) with selenium from
# its venv. Usage: bash Tests/browser/run-check.sh SCRIPT.py ARGS...
# Exit status: the script's (0 passed, 1 a check failed), or 77 when Chromium/chromedriver are not installed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (Debian packages: chromium chromium-driver)"; exit 77; }
done
source "$here/selenium-venv.sh"
script=$1
shift
exec "$venv/bin/python" "$here/$script" "$@"
