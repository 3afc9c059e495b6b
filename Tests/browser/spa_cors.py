#!/usr/bin/env python3
"""A single-page app in headless Chromium against the emulator: PKCE and a cross-origin fetch() to the token endpoint.

Usage: bash run-check.sh spa_cors.py B2C_BINARY
Starts the emulator (plain HTTP, a seed whose `spa` app lists this run's page origin) and serves Tests/browser/spa.html
on two loopback origins: one registered as the app's `spa` redirect, one not. Chromium signs Alice in from the
registered origin; the code is then redeemed by the page's fetch() first from the unregistered origin, where the
browser's own CORS check must block it (the preflight fails, so the code is never sent), then from the registered one,
where it must succeed. Prints one JSON line; exit 0 on success, 1 on a failed check.
"""
import http.server
import json
import os
import sys
import tempfile
import threading
import urllib.parse

from headless import check, chromium, default_seed, start_emulator
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

B2C = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
SPA_APP = "8d3a2e4c-9f6b-4a5d-8cae-4b7f3a2d9e1c"
SCOPE = "openid offline_access https://contoso.onmicrosoft.com/helloapi/demo.read"
ALICE = ("alice@contoso.com", "Alice-dev-2026!")


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(os.path.join(HERE, "spa.html"), "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_page():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def start_tenant(work, registered):
    """The default tenant, whose `spa` app lists this run's registered page origin."""
    seed = default_seed(B2C)
    app = next(a for a in seed["apps"] if a["clientId"] == SPA_APP)
    app["redirectUris"].append({"uri": f"{registered}/callback", "type": "spa"})
    return start_emulator(B2C, work, seed)


def result(driver):
    WebDriverWait(driver, 30).until(lambda d: d.title == "done")
    return json.loads(driver.find_element(By.ID, "result").text)


def main():
    out = {}
    with tempfile.TemporaryDirectory(prefix="b2c-spa.") as work:
        registered_server, registered = serve_page()
        other_server, other = serve_page()
        emulator, base = start_tenant(work, registered)
        driver = None
        try:
            driver = chromium(work)
            authority = f"{base}/contoso.onmicrosoft.com/B2C_1_susi"
            start = {"authority": authority, "client": SPA_APP, "scope": SCOPE}
            driver.get(f"{registered}/start?{urllib.parse.urlencode(start)}")
            form = WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "localAccountForm"))
            form.find_element(By.NAME, "logonIdentifier").send_keys(ALICE[0])
            form.find_element(By.NAME, "password").send_keys(ALICE[1])
            form.find_element(By.CSS_SELECTOR, "[type=submit]").click()
            callback = result(driver)
            check(callback.get("code") and callback.get("verifier"), f"the sign-in came back with {callback}")
            redeem = {"token_endpoint": f"{authority}/oauth2/v2.0/token", "client": SPA_APP, "code": callback["code"],
                      "verifier": callback["verifier"], "redirect_uri": f"{registered}/callback", "scope": SCOPE}

            driver.get(f"{other}/redeem?{urllib.parse.urlencode(redeem)}")
            blocked = result(driver)
            check("blocked" in blocked, f"an unregistered origin's fetch was not blocked: {blocked}")
            out["unregisteredOrigin"] = blocked["blocked"]

            driver.get(f"{registered}/redeem?{urllib.parse.urlencode(redeem)}")
            redeemed = result(driver)
            check(redeemed.get("status") == 200 and "access_token" in redeemed["body"], f"the registered origin's fetch: {redeemed}")
            out["registeredOrigin"] = redeemed["status"]
            out["refreshTokenExpiresIn"] = redeemed["body"].get("refresh_token_expires_in")
        finally:
            if driver is not None:
                driver.quit()
            emulator.terminate()
            emulator.wait(10)
            registered_server.shutdown()
            other_server.shutdown()
    print(json.dumps(out))


main()
