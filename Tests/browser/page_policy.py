#!/usr/bin/env python3
"""What a script can do on the local tenant's pages, asked of headless Chromium (docs/security.md).

Usage: bash run-check.sh page_policy.py B2C_BINARY
Starts the emulator (plain HTTP) with two page layouts on the default tenant: B2C_1_susi's has JavaScript off and carries
what a regular-expression sanitizer lets through (an `onerror` after a `/`, an entity-encoded `javascript:` URL, SVG's
`javascript&colon;`); B2C_1_signin's enables JavaScript (a contract layout) and its script asks the admin surface for
the seed. Chromium must refuse the first page's script (its console names the Content-Security-Policy) and run the
second's, whose request the admin surface must refuse (403: a page, even the tenant's own, is not a test). A `login_hint`
with a quote and a combining mark must stay text. Prints one JSON line; exit 0 on success, 1 on a failed check.
"""
import json
import os
import sys
import tempfile
import urllib.parse

from headless import check, chromium, default_seed, start_emulator
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

B2C = sys.argv[1]
CLIENT = "3f6b8c9d-2e1a-4b7c-8d9e-0f1a2b3c4d5e"
PWNED = "pwned"

QUIET = """<!DOCTYPE html><html><head><title>Contoso</title></head><body>
<img src="x"/onerror="document.title='pwned'">
<a id="entity" href="jav&#x61;script:document.title='pwned'">help</a>
<svg><a id="colon" xlink:href="javascript&colon;document.title='pwned'"><text y="20">x</text></a></svg>
<div id="api"></div></body></html>"""

SCRIPTED = """<!DOCTYPE html><html><head><title>Contoso</title>
<script>
document.title = "layout script ran";
fetch("/_admin/seed").then(function (r) { document.title = "admin " + r.status; },
                           function (e) { document.title = "admin unreachable"; });
</script></head><body><div id="api"></div></body></html>"""


def start(work):
    """The default tenant with B2C_1_susi's layout quiet (JavaScript off) and B2C_1_signin's scripted (JavaScript on)."""
    seed = default_seed(B2C)
    layouts = {}
    for name, html in (("quiet", QUIET), ("scripted", SCRIPTED)):
        layouts[name] = os.path.join(work, f"{name}.html")
        with open(layouts[name], "w") as f:
            f.write(html)
    contract = "urn:com:microsoft:aad:b2c:elements:contract:unifiedssp:2.1.5"
    for policy in seed["policies"]:
        if policy["id"] == "B2C_1_susi":
            policy["pageLayouts"] = {"unifiedssp": {"loadUri": layouts["quiet"], "dataUri": contract}, "javascript": False}
        if policy["id"] == "B2C_1_signin":
            policy["pageLayouts"] = {"unifiedssp": {"loadUri": layouts["scripted"], "dataUri": contract}, "javascript": True}
    return start_emulator(B2C, work, seed)


def authorize(base, policy, **extra):
    query = {"client_id": CLIENT, "response_type": "code", "redirect_uri": "http://localhost", "scope": "openid",
             "nonce": "n", "state": "s", **extra}
    return f"{base}/contoso.onmicrosoft.com/{policy}/oauth2/v2.0/authorize?{urllib.parse.urlencode(query)}"


def main():
    out = {}
    with tempfile.TemporaryDirectory(prefix="b2c-page-policy.") as work:
        emulator, base = start(work)
        driver = None
        try:
            driver = chromium(work, capabilities={"goog:loggingPrefs": {"browser": "ALL"}})
            # JavaScript off: the onerror handler is refused, and the browser says why.
            driver.get(authorize(base, "B2C_1_susi"))
            WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "localAccountForm"))
            refusals = []

            def refused(d):
                refusals.extend(e["message"] for e in d.get_log("browser") if "Content Security Policy" in e["message"])
                return refusals

            WebDriverWait(driver, 30).until(refused)
            check(driver.title != PWNED, "the layout's onerror handler ran")
            # The links are there, and following them runs nothing (javascript: URLs are script).
            for link in ("entity", "colon"):
                driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
                                      driver.find_element(By.ID, link))
            WebDriverWait(driver, 30).until(lambda d: len(refused(d)) >= 2)
            check(driver.title != PWNED, "a javascript: link of the layout ran")
            out["scriptOff"] = {"title": driver.title, "refusals": len(refusals)}

            # A login_hint that would leave its attribute (a quote with a combining mark) stays text.
            hint = "x\"\u0301 autofocus onfocus=document.title='pwned' x=\""
            driver.get(authorize(base, "B2C_1_susi", login_hint=hint))
            field = WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "logonIdentifier"))
            check(field.get_attribute("value") == hint, f"the hint came back as {field.get_attribute('value')!r}")
            check(field.get_attribute("onfocus") is None and driver.title != PWNED, "the hint became an attribute")
            out["loginHint"] = "text"

            # JavaScript on: the layout's script runs; the admin surface refuses its request.
            driver.get(authorize(base, "B2C_1_signin"))
            WebDriverWait(driver, 30).until(lambda d: d.title.startswith("admin "))
            check(driver.title == "admin 403", f"the admin surface answered the page: {driver.title}")
            out["scriptOn"] = driver.title
        finally:
            if driver is not None:
                driver.quit()
            emulator.terminate()
            emulator.wait(10)
    print(json.dumps(out))


main()
