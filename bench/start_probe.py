"""Time from exec to the first successful answer of a server, for bench/emulator-start.sh.

Usage: start_probe.py RUNS URL_TEMPLATE -- COMMAND... (COMMAND and URL_TEMPLATE may hold {port} and {state})
Each run picks a free loopback port, starts COMMAND, polls URL (GET) every 0.5 ms until it answers 200, records the
time since exec, then stops the server (SIGTERM, then SIGKILL after 5 s). {state} is a new empty directory per run
unless STATE_DIR is set (then that directory, reused: a restart). TLS answers are accepted without checking the
certificate during the poll (the emulator makes its CA as it starts); the last answer of each run is checked to be
the discovery document (or any 200 for the floor). Prints "p50_ms X min_ms Y max_ms Z runs N".
"""
import http.client
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

runs, template = int(sys.argv[1]), sys.argv[2]
command = sys.argv[sys.argv.index("--") + 1:]
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answer(url):
    u = urllib.parse.urlsplit(url)
    conn = (http.client.HTTPSConnection(u.hostname, u.port, context=context, timeout=2) if u.scheme == "https"
            else http.client.HTTPConnection(u.hostname, u.port, timeout=2))
    try:
        conn.request("GET", u.path or "/")
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


times = []
for _ in range(runs):
    port = free_port()
    state = os.environ.get("STATE_DIR") or tempfile.mkdtemp(prefix="b2c-start-")
    if not os.environ.get("STATE_DIR"):
        os.rmdir(state)  # a path that does not exist yet: the emulator makes it
    fill = {"port": port, "state": state}
    url = template.format(**fill)
    argv = [a.format(**fill) for a in command]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    body = None
    while time.perf_counter() - t0 < 30:
        try:
            status, body = answer(url)
            if status == 200:
                break
        except (OSError, http.client.HTTPException):
            pass
        if proc.poll() is not None:
            sys.exit(f"start_probe: {argv[0]} exited with {proc.returncode}: {proc.stderr.read().decode()[-500:]}")
        time.sleep(0.0005)
    else:
        proc.kill()
        sys.exit(f"start_probe: no answer from {url} within 30 s")
    times.append((time.perf_counter() - t0) * 1000)
    if "openid-configuration" in url and b'"token_endpoint"' not in body:
        sys.exit(f"start_probe: {url} did not answer a discovery document")
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if not os.environ.get("STATE_DIR"):
        shutil.rmtree(state, ignore_errors=True)
print(f"p50_ms {statistics.median(times):.2f} min_ms {min(times):.2f} max_ms {max(times):.2f} runs {len(times)}")
