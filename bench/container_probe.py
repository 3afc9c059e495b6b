"""Start time of the tenant's container image, for bench/container-start.sh.

Usage: container_probe.py RUNS IMAGE
Each run picks a free loopback port, runs `podman run -d` with that port published to 8080 and --public-url naming
it, polls discovery from the host every 0.5 ms until it answers 200, and records two times: from `podman run` to that
answer (what a CI job waits) and from the program's exec in the container (podman's State.StartedAt, on the same
clock) to that answer (the program's own start, with the port forwarding). The container is then removed.
Prints "run_p50_ms X run_min_ms Y run_max_ms Z exec_p50_ms A exec_min_ms B exec_max_ms C runs N".
"""
import datetime
import http.client
import json
import socket
import statistics
import subprocess
import sys
import time

runs, image = int(sys.argv[1]), sys.argv[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answer(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def started_at(name):
    out = subprocess.run(["podman", "inspect", name], check=True, capture_output=True, text=True).stdout
    stamp = json.loads(out)[0]["State"]["StartedAt"]  # 2026-11-25T14:41:02.123456789Z or with an offset
    date, frac = stamp.split(".", 1)
    digits = "".join(c for c in frac if c.isdigit())
    rest = frac[len(digits):].strip() or "Z"
    base = datetime.datetime.fromisoformat(date + (rest.replace("Z", "+00:00") if rest[0] in "Z+-" else "+00:00"))
    return base.timestamp() + int(digits.ljust(9, "0")[:9]) / 1e9


path = "/contoso.onmicrosoft.com/B2C_1_susi/v2.0/.well-known/openid-configuration"
from_run, from_exec = [], []
for i in range(runs):
    port, name = free_port(), f"b2c-bench-{i}"
    t0 = time.time()
    subprocess.run(["podman", "run", "-d", "--name", name, "-p", f"127.0.0.1:{port}:8080", image, "serve", "--public-url",
                    f"http://127.0.0.1:{port}"], check=True, stdout=subprocess.DEVNULL)
    body = None
    while time.time() - t0 < 60:
        try:
            status, body = answer(port, path)
            if status == 200:
                break
        except OSError:
            pass
        time.sleep(0.0005)
    t1 = time.time()
    assert body and json.loads(body)["issuer"].startswith(f"http://127.0.0.1:{port}/"), f"no discovery from {image}"
    from_run.append((t1 - t0) * 1000)
    from_exec.append((t1 - started_at(name)) * 1000)
    subprocess.run(["podman", "rm", "-f", "-t", "0", name], check=True, stdout=subprocess.DEVNULL)


def fmt(xs):
    return f"{statistics.median(xs):.1f} {min(xs):.1f} {max(xs):.1f}"


r, e = fmt(from_run).split(), fmt(from_exec).split()
print(f"run_p50_ms {r[0]} run_min_ms {r[1]} run_max_ms {r[2]} exec_p50_ms {e[0]} exec_min_ms {e[1]} exec_max_ms {e[2]} runs {runs}")
