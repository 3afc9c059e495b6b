#!/usr/bin/env python3
"""A real browser as $BROWSER for b2c's end-to-end tests: headless Chromium driven through chromedriver.

b2c starts the browser with `sh -c 'exec $BROWSER "$1"' sh URL`, so the URL is the last argument. This
program opens it in headless Chromium, fills the emulator's pages the way a person would, and returns
once the browser has landed on b2c's loopback redirect listener (http://localhost:PORT or
http://127.0.0.1:PORT). It is the browser counterpart of the scripted HTTP agent in Tests/Agent.

Like a person's browser, Chromium keeps running between invocations: the first one starts it in the
background on a persistent profile, and each invocation attaches chromedriver to it and opens the URL
in a new tab. So the emulator's SSO cookie (a session cookie) survives from one b2c command to the
next, as it would in a real browser. `chromium_agent.py --shutdown` stops that Chromium.
The emulator's CA is trusted through an NSS database under a private HOME for Chromium; certificate
errors are never ignored.

Environment:
  B2C_CHROMIUM_PROFILE     profile directory (required); used as Chromium's --user-data-dir. The agent
                           keeps its own files (NSS db, lock, markers) in its `.b2c-agent` subdirectory.
  B2C_AGENT_CA             PEM file of the emulator's CA (needed for an https emulator).
  B2C_AGENT_ACTION         signin (default) | forgot (a user flow's reset page, or a custom policy's: the address
                           verified with the outbox's code, then the new password) | edit-profile | cancel | logout | wrong-codes (every
                           second-factor code wrong) | signup (follows "Sign up now": the email verified with the
                           code from the outbox, B2C_AGENT_PASSWORD chosen, the names and B2C_AGENT_ATTRIBUTES)
  B2C_AGENT_ATTRIBUTES     sign-up attributes as name=value pairs separated by ';' (a checkbox is checked for "true")
  B2C_AGENT_CORRECTED_ATTRIBUTES   when the sign-up page comes back with a message (#claimVerificationServerError: a
                           validation error, an API connector's), these pairs replace B2C_AGENT_ATTRIBUTES' and it is sent
                           again, once
  B2C_AGENT_PHONE          the number (E.164) to register when the phone factor page asks for one
  B2C_AGENT_REMEMBER_ME    if set, "Keep me signed in" (#rememberMe) is checked on the sign-in page
  B2C_AGENT_IDP_BUTTON     the id of a social provider's button to press on the sign-in page (GoogleExchange, …); the
                           provider's page is then filled with B2C_AGENT_EMAIL and B2C_AGENT_DISPLAY_NAME
  B2C_AGENT_QR_CHECK       if set, the authenticator's QR code as Chromium shows it is decoded with zbarimg and must
                           hold the secret shown under "Still having trouble?"
  B2C_AGENT_EMAIL, B2C_AGENT_PASSWORD    the account to sign in with
  B2C_AGENT_NEW_PASSWORD   the password set by `forgot`; once set, later sign-ins of that email with the
                           `forgot` action use it (a marker in the profile remembers the reset)
  B2C_AGENT_DISPLAY_NAME, B2C_AGENT_GIVEN_NAME, B2C_AGENT_SURNAME   edit-profile values (each optional)
  B2C_CHROMIUM_SCREENSHOT  if set, a PNG of the first page, saved before anything is typed into it
  B2C_AGENT_TIMEOUT        seconds before giving up (default 60)
  B2C_CHROMIUM / B2C_CHROMEDRIVER   binaries (default /usr/bin/chromium, /usr/bin/chromedriver)

Exit status: 0 when the loopback listener was reached, 1 otherwise (with the reason on stderr).
b2c does not wait for its browser, so the reason also appears in b2c's stderr, where our output goes.
"""

import fcntl
import hashlib
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request

# Selenium Manager must never go looking for drivers on the network: the binaries are given explicitly.
os.environ["SE_OFFLINE"] = "true"

from selenium import webdriver  # noqa: E402  (imported after SE_OFFLINE is set)
from selenium.common.exceptions import NoSuchElementException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

ENV = os.environ
ACTIONS = ("signin", "forgot", "edit-profile", "cancel", "logout", "wrong-codes", "signup")
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")


class AgentError(Exception):
    """A reason to give up; printed on stderr and the exit status is 1."""


def log(message):
    print(f"chromium-agent: {message}", file=sys.stderr, flush=True)


# MARK: - profile, lock and CA trust


class Profile:
    """The persistent profile: Chromium's user data plus the agent's own bookkeeping next to it."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.agent_dir = os.path.join(self.root, ".b2c-agent")
        self.home = os.path.join(self.agent_dir, "home")  # HOME of the Chromium process
        self.nssdb = os.path.join(self.home, ".pki", "nssdb")
        os.makedirs(self.nssdb, mode=0o700, exist_ok=True)
        self._lock_file = None

    def lock(self, deadline):
        """One agent per profile at a time. b2c does not wait for its browser command to exit, so the next
        invocation (a resumed sign-in, the next test step) may start while the previous one is still
        finishing; it waits here rather than race it to start Chromium or share the WebDriver port."""
        self._lock_file = open(os.path.join(self.agent_dir, "lock"), "w")
        while True:
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise AgentError("another browser kept the profile busy until the timeout")
                time.sleep(0.1)

    def marker(self, name, email):
        """A file that records something done in an earlier invocation (e.g. the password reset)."""
        safe = urllib.parse.quote(email.lower(), safe="")
        return os.path.join(self.agent_dir, f"{name}-{safe}")

    def trust_ca(self, ca_path):
        """Puts the emulator's CA into the NSS database Chromium reads on Linux ($HOME/.pki/nssdb),
        as a trust anchor for TLS servers ("C,,"). Re-added each time, so a new CA replaces the old."""
        certutil = shutil.which("certutil")
        if certutil is None:
            raise AgentError("certutil not found (Debian package libnss3-tools); it is needed to trust the emulator's CA")
        db = f"sql:{self.nssdb}"
        if not os.path.exists(os.path.join(self.nssdb, "cert9.db")):
            run([certutil, "-d", db, "-N", "--empty-password"])
        nickname = "b2c-emulator"
        subprocess.run([certutil, "-d", db, "-D", "-n", nickname], capture_output=True)  # absent the first time
        run([certutil, "-d", db, "-A", "-t", "C,,", "-n", nickname, "-i", ca_path])


def run(argv):
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise AgentError(f"{os.path.basename(argv[0])} failed: {(result.stderr or result.stdout).strip()}")


# MARK: - the browser


class Browser:
    """One long-running headless Chromium per profile, like a person's browser that stays open.

    b2c opens each URL in "the browser"; a real one keeps running between sign-ins, and with it the
    emulator's SSO cookie (a session cookie, gone when the browser exits). So the first invocation
    starts Chromium with a DevTools port in the background, and every invocation (this one included)
    attaches chromedriver to it and works in a tab of its own. `--shutdown` stops it."""

    def __init__(self, profile):
        self.profile = profile
        self.pid_file = os.path.join(profile.agent_dir, "browser.pid")
        self.ca_file = os.path.join(profile.agent_dir, "browser-ca.sha256")
        self.port_file = os.path.join(profile.root, "DevToolsActivePort")  # written by Chromium

    def devtools_port(self):
        """The DevTools port of our running Chromium, or None when it is not running."""
        try:
            with open(self.port_file) as f:
                port = int(f.readline())
            # A direct connection: no proxy from the environment may stand between us and 127.0.0.1.
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(f"http://127.0.0.1:{port}/json/version", timeout=2):
                return port
        except (OSError, ValueError):
            return None

    def ensure_running(self, ca_digest, deadline):
        """The DevTools port of a Chromium that trusts the current CA, starting one when needed."""
        port = self.devtools_port()
        if port is not None and self._read(self.ca_file) == ca_digest:
            return port
        if port is not None:
            log("the emulator's CA changed: restarting Chromium")
            self.stop()
        if ca_digest:
            self.profile.trust_ca(ENV["B2C_AGENT_CA"])
        if os.path.exists(self.port_file):
            os.remove(self.port_file)
        arguments = [
            ENV.get("B2C_CHROMIUM", "/usr/bin/chromium"),
            "--headless=new",
            f"--user-data-dir={self.profile.root}",
            "--remote-debugging-port=0",        # Chromium picks a free port and writes it to DevToolsActivePort
            "--window-size=900,600",
            "--no-first-run",
            "--no-default-browser-check",
            "--password-store=basic",           # no desktop keyring in a test run
            "--disable-background-networking",  # no calls home, no component updates
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-dev-shm-usage",
        ]
        if os.geteuid() == 0:
            # Chromium refuses to start its sandbox as root (CI containers); this does not touch TLS checks.
            arguments.append("--no-sandbox")
        arguments.append("about:blank")
        with open(os.path.join(self.profile.agent_dir, "chromium.log"), "ab") as output:
            # Its own session: b2c may exit before Chromium does, and Chromium must not get b2c's signals.
            # The private HOME is where Chromium finds the NSS database with the emulator's CA.
            process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                                       start_new_session=True, env=dict(ENV, HOME=self.profile.home))
        with open(self.pid_file, "w") as f:
            f.write(f"{process.pid}\n")
        with open(self.ca_file, "w") as f:
            f.write(ca_digest)
        log(f"started headless Chromium (pid {process.pid})")
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AgentError(f"Chromium exited with status {process.returncode}; see {output.name}")
            port = self.devtools_port()
            if port is not None:
                return port
            time.sleep(0.05)
        raise AgentError("Chromium did not open its DevTools port in time")

    def attach(self, port):
        """A WebDriver session on the running Chromium, through chromedriver (never Selenium Manager)."""
        options = webdriver.ChromeOptions()
        options.debugger_address = f"127.0.0.1:{port}"
        service = Service(executable_path=ENV.get("B2C_CHROMEDRIVER", "/usr/bin/chromedriver"))
        try:
            return webdriver.Chrome(service=service, options=options)
        except WebDriverException as e:
            raise AgentError(f"chromedriver could not attach to Chromium: {e.msg or e}") from None

    def stop(self):
        """Stops the Chromium this profile started (by its recorded pid, and only if it is still ours)."""
        pid = self._read(self.pid_file)
        if not pid or not self._is_ours(int(pid)):
            return False
        pid = int(pid)
        # Closed as a person closes it (Browser.close over DevTools), so that it writes its cookie store to disk first: a
        # persistent cookie ("Keep me signed in") must survive the restart, a session cookie must not.
        port = self.devtools_port()
        if port is not None:
            try:
                driver = self.attach(port)
                driver.execute_cdp_cmd("Browser.close", {})
            except (AgentError, WebDriverException):
                pass
            for _ in range(100):
                if not self._is_ours(pid):
                    break
                time.sleep(0.05)
        if self._is_ours(pid):
            os.killpg(pid, signal.SIGTERM)  # Chromium leads its own process group (start_new_session)
        for _ in range(100):
            if not self._is_ours(pid):
                break
            time.sleep(0.05)
        else:
            os.killpg(pid, signal.SIGKILL)
        for _ in range(60):  # its helper processes (zygote, renderers) follow shortly
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        os.remove(self.pid_file)
        return True

    def _is_ours(self, pid):
        """True while `pid` is a live Chromium on this profile (a recycled pid is left alone)."""
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return False
        return not zombie and f"--user-data-dir={self.profile.root}".encode() in cmdline

    @staticmethod
    def _read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return ""


def find(driver, element_id):
    """The element with this id on the current page, or None."""
    try:
        return driver.find_element(By.ID, element_id)
    except NoSuchElementException:
        return None


def type_into(driver, element_id, text):
    field = find(driver, element_id)
    if field is None:
        raise AgentError(f"no #{element_id} field on {page_name(driver)}")
    field.clear()
    field.send_keys(text)


def click(driver, element_id):
    element = find(driver, element_id)
    if element is None:
        raise AgentError(f"no #{element_id} on {page_name(driver)}")
    element.click()


def page_name(driver):
    return f"'{driver.title}' ({urllib.parse.urlsplit(driver.current_url).path})"


def error_text(driver):
    box = find(driver, "error")
    return box.text.strip() if box is not None else None


def at_loopback(url, start):
    """True when the browser is on b2c's redirect listener: plain http on a loopback host, and not the
    emulator itself (which may also run on 127.0.0.1), nor another tenant the emulator federates with (an
    OpenID Connect provider on loopback: its pages live under /<tenant>/<policy>/...)."""
    parts = urllib.parse.urlsplit(url)
    return (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS
            and parts.netloc != urllib.parse.urlsplit(start).netloc
            and "/oauth2/" not in parts.path and "/emulator/" not in parts.path)


def verification_code(emulator_origin, email, ca_path):
    """The newest code the emulator "sent" to this address or number: GET /_admin/outbox?to=EMAIL.
    The CA is passed explicitly, so global settings such as REQUESTS_CA_BUNDLE play no part."""
    context = ssl.create_default_context(cafile=ca_path) if ca_path else ssl.create_default_context()
    url = f"{emulator_origin}/_admin/outbox?to={urllib.parse.quote(email, safe='')}"
    with urllib.request.urlopen(url, context=context, timeout=10) as response:
        messages = json.load(response).get("messages", [])
    if not messages:
        raise AgentError(f"the emulator's outbox has no message for {email}")
    newest = max(messages, key=lambda m: (m.get("createdAt", 0), m.get("id", 0)))
    return str(newest["code"])


def totp_code(secret, now=None):
    """RFC 6238 (SHA-1, 30 s, six digits), as an authenticator app computes it from the secret it was given."""
    import base64
    import hmac
    import struct
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    counter = int((now if now is not None else time.time()) // 30)
    mac = hmac.new(key, struct.pack(">Q", counter), "sha1").digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1000000:06d}"


# MARK: - acting like a person


class Agent:
    def __init__(self, driver, profile, start_url, deadline):
        self.driver = driver
        self.profile = profile
        self.start_url = start_url
        self.deadline = deadline
        self.action = ENV.get("B2C_AGENT_ACTION", "signin")
        self.email = ENV.get("B2C_AGENT_EMAIL", "")
        self.screenshot = ENV.get("B2C_CHROMIUM_SCREENSHOT")
        self.signins_submitted = 0

    def run(self):
        """Opens the URL in a new tab, works through the pages, and closes the tab at the loopback page."""
        d = self.driver
        home_tab = d.current_window_handle
        d.switch_to.new_window("tab")
        try:
            self.navigate()
        finally:
            try:
                d.close()
                d.switch_to.window(home_tab)
            except WebDriverException:
                pass  # the browser is gone; the error that ended the run is the one to report

    def navigate(self):
        self.driver.set_page_load_timeout(max(1, self.deadline - time.monotonic()))
        self.driver.get(self.start_url)
        first_page = True
        while True:
            if time.monotonic() > self.deadline:
                raise AgentError(f"timed out on {page_name(self.driver)} before reaching the loopback listener")
            if at_loopback(self.driver.current_url, self.start_url):
                return self.finish()
            if self.driver.execute_script("return document.readyState") != "complete":
                time.sleep(0.1)
                continue
            if first_page:
                log(f"page language {self.driver.execute_script('return document.documentElement.lang')}, "
                    f"title '{self.driver.title}'")
            if first_page and self.screenshot:
                self.take_screenshot()
            first_page = False
            page = self.driver.find_element(By.TAG_NAME, "html")
            if not self.act():
                # Nothing for a person to do here (a redirect or an auto-submitting form is under way).
                time.sleep(0.1)
                continue
            self.wait_for_navigation(page)

    def act(self):
        """Does what the current page asks for; False when it asks for nothing."""
        d = self.driver
        if self.action == "logout":
            # Signing out asks nothing of the person: only follow the redirects.
            if error_text(d):
                raise AgentError(f"the emulator shows an error: {error_text(d)}")
            return False
        if self.action == "cancel" and find(d, "cancel") is not None:
            log(f"cancelling on {page_name(d)}")
            click(d, "cancel")
        elif self.second_factor():
            pass
        elif ENV.get("B2C_AGENT_IDP_BUTTON") and find(d, ENV["B2C_AGENT_IDP_BUTTON"]) is not None:
            log(f"pressing #{ENV['B2C_AGENT_IDP_BUTTON']}")
            click(d, ENV["B2C_AGENT_IDP_BUTTON"])
        elif find(d, "idpSignIn") is not None:
            log(f"at the identity provider: signing in as {self.email}")
            type_into(d, "email", self.email)
            if ENV.get("B2C_AGENT_DISPLAY_NAME"):
                type_into(d, "name", ENV["B2C_AGENT_DISPLAY_NAME"])
            click(d, "next")
        elif find(d, "localAccountForm") is not None:
            self.sign_in()
        elif self.action == "signup" and self.on_sign_up_page():
            self.sign_up()
        elif self.action == "forgot" and self.on_policy_page():
            self.reset_by_policy()
        elif find(d, "sendCode") is not None:
            log("password reset: asking for a verification code")
            type_into(d, "email", self.email)
            click(d, "sendCode")
        elif find(d, "verificationCode") is not None:
            self.enter_code_and_new_password()
        elif find(d, "attributeVerification") is not None and find(d, "newPassword") is not None:
            raise AgentError("the sign-up page appeared; this agent does not create accounts")
        elif find(d, "attributeVerification") is not None and (find(d, "displayName") or find(d, "givenName")) is not None:
            self.edit_profile()  # a custom policy's profile page may ask the names without the display name (the starter packs)
        elif error_text(d):
            raise AgentError(f"the emulator shows an error: {error_text(d)}")
        elif find(d, "claimVerificationServerError") is not None and not d.find_elements(By.TAG_NAME, "form"):
            raise AgentError(f"blocked: {find(d, 'claimVerificationServerError').text.strip()}")
        else:
            return False
        return True

    def outbox_code(self, to):
        parts = urllib.parse.urlsplit(self.driver.current_url)
        if self.action == "wrong-codes":
            return "000000"
        return verification_code(f"{parts.scheme}://{parts.netloc}", to, ENV.get("B2C_AGENT_CA"))

    def second_factor(self):
        """The MFA pages, by B2C's element ids (email, phone, authenticator); False when this is none of them."""
        d = self.driver
        if find(d, "ReadOnlyEmail_success") is not None and find(d, "continue") is not None:
            log("email verified: continuing")
            click(d, "continue")
        elif find(d, "ReadOnlyEmail_ver_input") is not None:
            log("MFA by email: entering the code from the outbox")
            type_into(d, "ReadOnlyEmail_ver_input", self.outbox_code(self.email))
            click(d, "ReadOnlyEmail_ver_but_verify")
        elif find(d, "ReadOnlyEmail_ver_but_send") is not None:
            log("MFA by email: sending the code")
            click(d, "ReadOnlyEmail_ver_but_send")
        elif find(d, "verifyCode") is not None and find(d, "verificationCode") is not None:
            sent_to = find(d, "codeSentTo").text.rsplit(" ", 1)[-1].rstrip(".")
            log(f"MFA by phone: entering the code sent to {sent_to}")
            type_into(d, "verificationCode", self.outbox_code(sent_to))
            click(d, "verifyCode")
        elif find(d, "verifyPhone") is not None and find(d, "sendCode") is not None:
            if find(d, "number") is not None:
                phone = ENV.get("B2C_AGENT_PHONE", "")
                if not phone:
                    raise AgentError("the phone factor page asks for a number and B2C_AGENT_PHONE is not set")
                codes = [o.get_attribute("value") for o in d.find_elements(By.CSS_SELECTOR, "#countryCode option")]
                country = max((c for c in codes if phone.startswith(c)), key=len, default=None)
                if country is None:
                    raise AgentError(f"no country code of the page fits {phone}")
                d.find_element(By.CSS_SELECTOR, f"#countryCode option[value='{country}']").click()
                type_into(d, "number", phone[len(country):])
                log(f"MFA by phone: registering {phone}, code by text message")
            else:
                log("MFA by phone: a code by text message to the number on record")
            click(d, "sendCode")
        elif find(d, "secretKey") is not None:
            secret = find(d, "secretKey").get_attribute("textContent").strip()
            if ENV.get("B2C_AGENT_QR_CHECK"):
                self.check_qr_code(secret)
            with open(self.profile.marker("totp", self.email), "w") as f:
                f.write(secret + "\n")
            log("MFA by authenticator app: registered its secret ('Still having trouble?')")
            click(d, "continue")
        elif find(d, "otpCode") is not None:
            marker = self.profile.marker("totp", self.email)
            if not os.path.exists(marker):
                raise AgentError(f"an authenticator code is asked and no secret was registered for {self.email}")
            # A code is taken once (RFC 6238 5.2): after one was used, the next step's, which the tenant takes early
            # (one step of drift) - what the authenticator app shows 30 seconds later.
            used = self.profile.marker("totp-step", self.email)
            step = int(time.time() // 30)
            if os.path.exists(used):
                step = max(step, int(open(used).read().strip()) + 1)
            code = totp_code(open(marker).read().strip(), now=step * 30)
            if self.action != "wrong-codes":
                with open(used, "w") as f:
                    f.write(f"{step}\n")
            if self.action == "wrong-codes":
                code = f"{(int(code[0]) + 1) % 10}{code[1:]}"
            log("MFA by authenticator app: entering its code")
            type_into(d, "otpCode", code)
            click(d, "continue")
        else:
            return False
        return True

    def check_qr_code(self, secret):
        """The QR code as Chromium draws it, decoded by zbarimg: it must carry this secret."""
        shot = os.path.join(self.profile.agent_dir, "qr.png")
        with open(shot, "wb") as f:
            f.write(find(self.driver, "qrCode").screenshot_as_png)
        decoded = subprocess.run(["zbarimg", "--raw", "-q", shot], capture_output=True, text=True)
        uri = decoded.stdout.strip()
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(uri).query)
        if not uri.startswith("otpauth://totp/") or query.get("secret") != [secret]:
            raise AgentError(f"the QR code reads {uri!r}, not an otpauth URI with the secret shown")
        log("the QR code, decoded from Chromium's rendering, carries the secret shown")

    def sign_in(self):
        d = self.driver
        reset_marker = self.profile.marker("reset-done", self.email)
        reset_done = os.path.exists(reset_marker)
        if self.action == "forgot" and not reset_done:
            log("clicking 'Forgot your password?'")
            click(d, "forgotPassword")
            return
        if self.action == "signup":
            log("clicking 'Sign up now'")
            click(d, "createAccount")
            return
        if self.signins_submitted > 0:
            raise AgentError(f"the sign-in was refused: {error_text(d) or 'the sign-in page came back'}")
        use_new = self.action == "forgot" and reset_done
        password = ENV.get("B2C_AGENT_NEW_PASSWORD" if use_new else "B2C_AGENT_PASSWORD", "")
        log(f"signing in as {self.email}" + (" with the new password" if use_new else ""))
        # A user flow's field is #logonIdentifier; a custom policy's is its claim type's id (#signInName in the packs).
        type_into(d, "signInName" if find(d, "signInName") is not None else "logonIdentifier", self.email)
        type_into(d, "password", password)
        if ENV.get("B2C_AGENT_REMEMBER_ME"):
            log("checking 'Keep me signed in'")
            click(d, "rememberMe")
        click(d, "next")
        self.signins_submitted += 1

    def enter_code_and_new_password(self):
        d = self.driver
        if error_text(d):
            raise AgentError(f"the password reset was refused: {error_text(d)}")
        parts = urllib.parse.urlsplit(d.current_url)
        code = verification_code(f"{parts.scheme}://{parts.netloc}", self.email, ENV.get("B2C_AGENT_CA"))
        log("password reset: entering the code from the outbox and the new password")
        type_into(d, "verificationCode", code)
        self.choose_new_password()

    def choose_new_password(self):
        """Types B2C_AGENT_NEW_PASSWORD twice and continues; the next sign-in of this account (the resumed one, in the
        next invocation) uses it."""
        new_password = ENV.get("B2C_AGENT_NEW_PASSWORD", "")
        if not new_password:
            raise AgentError("B2C_AGENT_NEW_PASSWORD is not set")
        type_into(self.driver, "newPassword", new_password)
        type_into(self.driver, "reenterPassword", new_password)
        click(self.driver, "continue")
        with open(self.profile.marker("reset-done", self.email), "w") as f:
            f.write("1\n")

    def on_sign_up_page(self):
        form = find(self.driver, "attributeVerification")
        action = (form.get_attribute("action") or "") if form is not None else ""
        # A user flow's sign-up posts to /signup; a custom policy's pages all post to /policy (its sign-up asks a password).
        return action.endswith("/signup") or (action.endswith("/policy") and find(self.driver, "newPassword") is not None)

    def on_policy_page(self):
        """A custom policy's self-asserted page (its forms post to /policy)."""
        form = find(self.driver, "attributeVerification")
        return form is not None and (form.get_attribute("action") or "").endswith("/policy")

    def verify_email(self, what):
        """One step of verifying the address with the outbox's code, by B2C's ids: its classic widget (email_ver_*) or its
        display control (emailVerificationControl_but_*, #verificationCode). False when the page asks none."""
        d = self.driver
        send = next((i for i in ("email_ver_but_send", "emailVerificationControl_but_send_code") if find(d, i) is not None), None)
        if send is not None:
            log(f"{what}: sending a verification code to {self.email} (#{send})")
            type_into(d, "email", self.email)
            click(d, send)
        elif find(d, "email_ver_input") is not None:
            log(f"{what}: entering the code from the outbox")
            type_into(d, "email_ver_input", self.outbox_code(self.email))
            click(d, "email_ver_but_verify")
        elif find(d, "emailVerificationControl_but_verify_code") is not None:
            log(f"{what}: entering the code from the outbox (#verificationCode)")
            type_into(d, "verificationCode", self.outbox_code(self.email))
            click(d, "emailVerificationControl_but_verify_code")
        else:
            return False
        return True

    def reset_by_policy(self):
        """A custom policy's password reset (the packs' PasswordReset.xml): the address verified with the outbox's code,
        then the new password on the next page."""
        d = self.driver
        if error_text(d):
            raise AgentError(f"the password reset was refused: {error_text(d)}")
        if self.verify_email("password reset"):
            return
        if find(d, "newPassword") is None:
            log("password reset: the address is verified; continuing")
            click(d, "continue")
            return
        log("password reset: choosing the new password")
        self.choose_new_password()

    def sign_up(self):
        """The sign-up page by B2C's ids: send the code, type it from the outbox, then the password and attributes."""
        d = self.driver
        server_message = find(d, "claimVerificationServerError")
        if server_message is not None and ENV.get("B2C_AGENT_CORRECTED_ATTRIBUTES") and not getattr(self, "corrected", False):
            log(f"sign-up: the page says '{server_message.text.strip()}'; correcting the attributes")
            self.corrected = True
        elif error_text(d):
            raise AgentError(f"the sign-up was refused: {error_text(d)}")
        if self.verify_email("sign-up"):
            return
        if find(d, "email_success") is None and find(d, "emailVerificationControl_success_message") is None:
            type_into(d, "email", self.email)  # a user flow without verification
        password = ENV.get("B2C_AGENT_PASSWORD", "")
        type_into(d, "newPassword", password)
        type_into(d, "reenterPassword", password)
        values = {"displayName": ENV.get("B2C_AGENT_DISPLAY_NAME"), "givenName": ENV.get("B2C_AGENT_GIVEN_NAME"),
                  "surname": ENV.get("B2C_AGENT_SURNAME")}
        pairs = ENV.get("B2C_AGENT_CORRECTED_ATTRIBUTES" if getattr(self, "corrected", False) else "B2C_AGENT_ATTRIBUTES", "")
        for pair in filter(None, pairs.split(";")):
            name, _, value = pair.partition("=")
            values[name] = value
        for name, value in values.items():
            element = find(d, name)
            if value is None or element is None:
                continue
            if element.get_attribute("type") == "checkbox":
                if (value == "true") != element.is_selected():
                    element.click()
            else:
                type_into(d, name, value)
        log(f"sign-up: creating the account ({', '.join(k for k, v in values.items() if v is not None)})")
        click(d, "continue")

    def edit_profile(self):
        d = self.driver
        if error_text(d):
            raise AgentError(f"the profile was refused: {error_text(d)}")
        signed_in_as = find(d, "signedInAs")
        if self.email and signed_in_as is not None and signed_in_as.text.strip().lower() != self.email.lower():
            raise AgentError(f"the profile page is {signed_in_as.text.strip()}'s, not {self.email}'s")
        changes = {"displayName": ENV.get("B2C_AGENT_DISPLAY_NAME"), "givenName": ENV.get("B2C_AGENT_GIVEN_NAME"),
                   "surname": ENV.get("B2C_AGENT_SURNAME")}
        for field, value in changes.items():
            if value is not None:
                type_into(d, field, value)
        log("submitting the profile" + (f" ({', '.join(k for k, v in changes.items() if v is not None)})"
                                        if any(v is not None for v in changes.values()) else " unchanged"))
        click(d, "continue")

    def wait_for_navigation(self, old_page):
        """Waits until the page acted on has been replaced (the form was posted or the link followed)."""
        while time.monotonic() < self.deadline:
            try:
                old_page.is_enabled()  # raises once the old document is gone
            except WebDriverException:
                return
            if at_loopback(self.driver.current_url, self.start_url):
                return
            time.sleep(0.1)
        raise AgentError(f"the browser stayed on {page_name(self.driver)}")

    def take_screenshot(self):
        os.makedirs(os.path.dirname(os.path.abspath(self.screenshot)), exist_ok=True)
        if not self.driver.save_screenshot(self.screenshot):
            raise AgentError(f"could not save the screenshot to {self.screenshot}")
        log(f"screenshot of {page_name(self.driver)} saved")
        self.screenshot = None

    def finish(self):
        # The listener answers "Signed in" or "Sign-in did not complete": either way b2c has its answer.
        try:
            heading = self.driver.find_element(By.TAG_NAME, "h1").text
        except WebDriverException:
            heading = "?"
        log(f"reached the loopback listener ({heading})")


# MARK: - main


def main(argv):
    if len(argv) < 2:
        print("usage: chromium_agent.py URL | chromium_agent.py --shutdown", file=sys.stderr)
        return 2
    deadline = time.monotonic() + float(ENV.get("B2C_AGENT_TIMEOUT", "60"))
    action = ENV.get("B2C_AGENT_ACTION", "signin")
    driver = None
    try:
        if not ENV.get("B2C_CHROMIUM_PROFILE"):
            raise AgentError("B2C_CHROMIUM_PROFILE (the profile directory) is not set")
        profile = Profile(ENV["B2C_CHROMIUM_PROFILE"])
        browser = Browser(profile)
        profile.lock(deadline)  # also waits for an agent still at work in this profile
        if argv[1] == "--shutdown":
            if browser.stop():
                log("stopped Chromium")
            return 0
        if action not in ACTIONS:
            raise AgentError(f"B2C_AGENT_ACTION is '{action}'; expected one of {', '.join(ACTIONS)}")
        ca_digest = ""
        if ENV.get("B2C_AGENT_CA"):
            with open(ENV["B2C_AGENT_CA"], "rb") as f:
                ca_digest = hashlib.sha256(f.read()).hexdigest()
        driver = browser.attach(browser.ensure_running(ca_digest, deadline))
        Agent(driver, profile, argv[-1], deadline).run()
        return 0
    except AgentError as e:
        log(f"error: {e}")
        return 1
    except WebDriverException as e:
        log(f"error: the browser failed: {e.msg or e}")
        return 1
    except OSError as e:  # the outbox request, the profile directory, the CA file
        log(f"error: {e}")
        return 1
    finally:
        if driver is not None:
            driver.quit()  # ends the WebDriver session only: the attached Chromium keeps running


if __name__ == "__main__":
    sys.exit(main(sys.argv))
