"""What the headless-Chromium checks share: Chromium started as the tests need it, and a local tenant on a seed.

Imported by spa_cors.py, page_policy.py and page_looks.py (run by run-check.sh, which makes the selenium venv)."""
import json
import os
import subprocess

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")


def chromium(work, extra_arguments=(), capabilities=None):
    """Headless Chromium with a profile in `work`, the chromedriver given explicitly (nothing reaches for the network)."""
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("B2C_CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", f"--user-data-dir={work}/profile", "--no-first-run", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--disable-extensions",
                     *extra_arguments):
        options.add_argument(argument)
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium refuses its sandbox as root (CI containers)
    service = Service(executable_path=os.environ.get("B2C_CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=options)


def default_seed(b2c):
    return json.loads(subprocess.run([b2c, "emulator", "default-seed"], check=True, capture_output=True, text=True).stdout)


def start_emulator(b2c, work, seed):
    """The tenant on `seed` (plain http, a free port); returns the process and its base URL."""
    with open(os.path.join(work, "seed.json"), "w") as f:
        json.dump(seed, f)
    emulator = subprocess.Popen([b2c, "emulator", "serve", "--seed", os.path.join(work, "seed.json"), "--port", "0"],
                                stdout=subprocess.PIPE, stderr=open(os.path.join(work, "emulator.err"), "w"), text=True)
    line = emulator.stdout.readline()  # "b2c emulator: http://127.0.0.1:PORT tenant …"
    check(line.startswith("b2c emulator: http"), f"the emulator did not start: {line!r}")
    return emulator, line.split()[2]
