# Sourced by the browser scripts: $venv is a Python venv with selenium (made on first use; B2C_BROWSER_VENV overrides).
# Selenium Manager stays offline: the scripts give Chromium and chromedriver explicitly.
venv=${B2C_BROWSER_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/venv-browser}
if ! "$venv/bin/python" -c 'import selenium' >/dev/null 2>&1; then
  python3 -m venv "$venv" >&2 && "$venv/bin/pip" install --quiet --disable-pip-version-check selenium >&2 || {
    echo "error: could not install selenium into $venv" >&2
    exit 1
  }
fi
export SE_OFFLINE=true
