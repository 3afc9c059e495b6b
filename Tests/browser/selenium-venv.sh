# Sourced by the browser scripts: $venv is a Python venv with selenium (made on first use; B2C_BROWSER_VENV overrides).
# Tests run in parallel (and .ci/run makes the venv beside the build): one maker at a time, the others wait for it.
# Selenium Manager stays offline: the scripts give Chromium and chromedriver explicitly.
venv=${B2C_BROWSER_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/venv-browser}
mkdir -p "$(dirname "$venv")"
exec 8>"$venv.lock"
flock 8
if ! "$venv/bin/python" -c 'import selenium' >/dev/null 2>&1; then
  python3 -m venv "$venv" >&2 && "$venv/bin/pip" install --quiet --disable-pip-version-check selenium >&2 || {
    echo "error: could not install selenium into $venv" >&2
    exit 1
  }
fi
flock -u 8
exec 8>&-
export SE_OFFLINE=true
