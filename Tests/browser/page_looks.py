#!/usr/bin/env python3
"""How the tenant's pages look, measured in headless Chromium (docs/emulator.md, "Custom page layouts").

Usage: bash run-check.sh page_looks.py B2C_EMULATOR_BINARY [--update]
Renders the sign-in (unifiedssp) and sign-up (selfasserted) pages of B2C_1_susi with no layout and in each built-in layout
(`b2c-emulator page B2C_1_susi TYPE --layout NAME`), opens each at a 1280x900 viewport and checks, by
getBoundingClientRect and computed styles: every label sits above its field, left-aligned with it; every field fills its
container and is at least 250px wide; the primary buttons are drawn, at least 28px high, on an opaque dark background;
"Sign up now" and Cancel are on separate lines or well apart; no list item shows a bullet; every image shown has loaded
(no broken logo); nothing is wider than the window. The key elements' boxes are compared with page_looks.json (the
reference sizes and positions, within its tolerance); --update writes the measured ones there instead.
B2C_PAGE_LOOKS_OUT=DIR keeps the screenshots. Prints one JSON line; exit 0 on success, 1 on a failed check (each failure
on its own line).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from headless import chromium
from selenium.webdriver.support.ui import WebDriverWait

EMULATOR = sys.argv[1]
UPDATE = "--update" in sys.argv[2:]
REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page_looks.json")
WIDTH, HEIGHT = 1280, 900
LAYOUTS = (None, "classic", "oceanBlue", "slateGray")
# The elements whose boxes are compared with the reference, and the buttons that must look like buttons.
KEY = {
    "unifiedssp": ["#api", ".companyLogo", "label[for=logonIdentifier]", "#logonIdentifier", "label[for=password]", "#password",
                   "#forgotPassword", "#next", "#createAccount", "#cancel"],
    "selfasserted": ["#api", ".companyLogo", "label[for=email]", "#email", "#email_ver_but_send", "#newPassword",
                     "#reenterPassword", "#displayName", "#surname", "#continue", "#cancel"],
}
PRIMARY = {"unifiedssp": ["next"], "selfasserted": ["continue", "email_ver_but_send"]}

# Runs in the page: the rules every page keeps, and the boxes of the key elements (document coordinates).
MEASURE = """
const [keys, primary] = arguments;
const failures = [];
const box = e => { const b = e.getBoundingClientRect(); return [b.x + scrollX, b.y + scrollY, b.width, b.height].map(Math.round); };
const shown = e => { const s = getComputedStyle(e), b = e.getBoundingClientRect();
                     return s.display !== 'none' && s.visibility !== 'hidden' && b.width > 0 && b.height > 0; };
const name = e => e.id ? '#' + e.id : e.tagName.toLowerCase() + (e.className ? '.' + e.className.split(' ')[0] : '');
for (const label of document.querySelectorAll('label[for]')) {
  const field = document.getElementById(label.htmlFor);
  if (!field || !shown(label) || !shown(field) || ['checkbox', 'radio'].includes(field.type)) continue;
  const l = label.getBoundingClientRect(), f = field.getBoundingClientRect();
  if (l.bottom > f.top + 0.5) failures.push(`the label of ${name(field)} is not above it (label bottom ${l.bottom}, field top ${f.top})`);
  if (Math.abs(l.left - f.left) > 1) failures.push(`the label of ${name(field)} starts at x=${l.left}, the field at x=${f.left}`);
  const p = field.parentElement, ps = getComputedStyle(p);
  const inner = p.clientWidth - parseFloat(ps.paddingLeft) - parseFloat(ps.paddingRight);
  if (Math.abs(f.width - inner) > 1) failures.push(`${name(field)} is ${f.width}px wide in a ${inner}px container`);
  if (f.width < 250) failures.push(`${name(field)} is only ${f.width}px wide`);
}
for (const id of primary) {
  const b = document.getElementById(id);
  if (!b || !shown(b)) { failures.push(`#${id} is not shown`); continue; }
  // A primary button's colour: opaque, and dark enough for white text (not the browser's light grey).
  const background = getComputedStyle(b).backgroundColor, c = background.match(/[\\d.]+/g).map(Number);
  const luminance = (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
  if ((c.length > 3 && c[3] < 1) || luminance > 0.5) failures.push(`#${id} has no button colour (${background})`);
  if (b.getBoundingClientRect().height < 28) failures.push(`#${id} is ${b.getBoundingClientRect().height}px high`);
}
const create = document.getElementById('createAccount'), cancel = document.getElementById('cancel');
if (create && cancel) {
  const a = create.getBoundingClientRect(), c = cancel.getBoundingClientRect();
  const sameLine = a.top < c.bottom && c.top < a.bottom;
  const gap = Math.max(c.left - a.right, a.left - c.right);
  if (sameLine && gap < 24) failures.push(`#createAccount and #cancel share a line ${gap}px apart`);
}
for (const li of document.querySelectorAll('li')) {
  const s = getComputedStyle(li);
  if (shown(li) && s.display === 'list-item' && s.listStyleType !== 'none') failures.push(`${name(li)} shows a ${s.listStyleType} bullet`);
}
for (const img of document.images) {
  if (shown(img) && !(img.complete && img.naturalWidth > 0)) failures.push(`the image ${name(img)} is broken`);
}
const doc = document.documentElement;
if (doc.scrollWidth > innerWidth) failures.push(`the page is ${doc.scrollWidth}px wide in a ${innerWidth}px window`);
const boxes = {};
for (const k of keys) { const e = document.querySelector(k); if (e && shown(e)) boxes[k] = box(e); }
return {failures, boxes, document: [doc.scrollWidth, doc.scrollHeight]};
"""


def render(work, page_type, layout):
    args = [EMULATOR, "page", "B2C_1_susi", page_type] + (["--layout", layout] if layout else [])
    html = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    path = os.path.join(work, f"{page_type}-{layout or 'none'}.html")
    with open(path, "w") as f:
        f.write(html)
    return path


def chromium_at_size(work):
    driver = chromium(work, ("--window-size={},{}".format(WIDTH, HEIGHT), "--hide-scrollbars", "--force-device-scale-factor=1",
                             "--font-render-hinting=none"))
    # The viewport itself, not the window around it, is 1280x900.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    return driver


def png_size(png):
    return [int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")]


def compare(page, measured, reference, tolerance):
    """The key boxes against the reference: x and width within tolerance["x"], y within tolerance["y"], height within
    tolerance["height"] (fonts differ a little between machines; a layout that breaks moves far more)."""
    failures = []
    if reference is None:
        return [f"{page}: no reference in page_looks.json (run with --update)"]
    if measured["screenshot"] != reference["screenshot"]:
        failures.append(f"{page}: the screenshot is {measured['screenshot']}, expected {reference['screenshot']}")
    if abs(measured["document"][1] - reference["document"][1]) > tolerance["document"]:
        failures.append(f"{page}: the page is {measured['document'][1]}px high, expected {reference['document'][1]}")
    for key, expected in reference["boxes"].items():
        got = measured["boxes"].get(key)
        if got is None:
            failures.append(f"{page}: {key} is not shown")
            continue
        limits = (tolerance["x"], tolerance["y"], tolerance["x"], tolerance["height"])
        if any(abs(g - e) > t for g, e, t in zip(got, expected, limits)):
            failures.append(f"{page}: {key} is at {got} (x, y, width, height), expected {expected}")
    for key in measured["boxes"].keys() - reference["boxes"].keys():
        failures.append(f"{page}: {key} is shown, the reference has none")
    return failures


def main():
    with open(REFERENCE) as f:
        reference = json.load(f)
    keep = os.environ.get("B2C_PAGE_LOOKS_OUT")
    measured, failures = {}, []
    with tempfile.TemporaryDirectory(prefix="b2c-page-looks.") as work:
        shots = keep or work
        os.makedirs(shots, exist_ok=True)
        driver = chromium_at_size(work)
        try:
            for page_type in ("unifiedssp", "selfasserted"):
                for layout in LAYOUTS:
                    page = f"{page_type}/{layout or 'none'}"
                    driver.get("file://" + render(work, page_type, layout))
                    WebDriverWait(driver, 30).until(
                        lambda d: d.execute_script("return [...document.images].every(i => i.complete)"))
                    result = driver.execute_script(MEASURE, KEY[page_type], PRIMARY[page_type])
                    png = driver.get_screenshot_as_png()
                    with open(os.path.join(shots, f"{page_type}-{layout or 'none'}.png"), "wb") as f:
                        f.write(png)
                    measured[page] = {"screenshot": png_size(png), "document": result["document"], "boxes": result["boxes"]}
                    failures += [f"{page}: {failure}" for failure in result["failures"]]
                    if not UPDATE:
                        failures += compare(page, measured[page], reference["pages"].get(page), reference["tolerance"])
        finally:
            driver.quit()
    if UPDATE:
        reference["pages"] = measured
        text = json.dumps(reference, indent=1, sort_keys=True)
        with open(REFERENCE, "w") as f:  # a box on one line: [x, y, width, height]
            f.write(re.sub(r"\[\s*([^][{}]*?)\s*\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n")
    for failure in failures:
        print(f"FAILED: {failure}")
    print(json.dumps({"pages": len(measured), "failures": len(failures), "screenshots": keep,
                      "viewport": [WIDTH, HEIGHT], "updated": UPDATE}))
    sys.exit(1 if failures else 0)


main()
